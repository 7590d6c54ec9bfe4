// RUN: dycl-opt %s -p extract-hcfg,outline-subgraphs | filecheck %s

// A fallback region is a host operation: tensor work before and after it becomes
// two sub-DNNs, and the region stays in the host between them, in order.

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK-NEXT:    %[[H:.*]] = dycl.call_subgraph @sub_0(%[[X]]) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[P:.*]] = dycl.py_region(%[[H]])
// CHECK-NEXT:    %[[R:.*]] = dycl.call_subgraph @sub_1(%[[P]]) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x4xf32>
// CHECK:       func.func @sub_0
// CHECK:       func.func @sub_1
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %h = dycl.call_function "torch.relu"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %p = dycl.py_region(%h) {code = "def __dycl_region(__dycl_root, h):\0A    print(h)\0A    return (h,)\0A", globals = "builtins", loc = "m.py:3:5", construct = "expression statement", reason = "print()"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %r = dycl.call_function "torch.tanh"(%p) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  dycl.return %r : tensor<1x4xf32>
}
