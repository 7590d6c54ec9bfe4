// RUN: dycl-opt %s -p extract-hcfg,outline-subgraphs | filecheck %s

// A host check stays in the host: the predicate is computed by a sub-DNN, the
// failing branch raises (and its unreachable return stays), the tensor work after
// the check is a sub-DNN of its own.

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK:         dycl.call_subgraph @sub_0(%[[X]])
// CHECK:         dycl.if %{{.*}} {
// CHECK:           dycl.raise "builtins.ValueError"(%{{.*}}) : !dycl.pyobj
// CHECK-NEXT:      dycl.return
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK:         %[[R:.*]] = dycl.call_subgraph @sub_1(%[[X]])
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x4xf32>
// CHECK:       func.func @sub_0
// CHECK:       func.func @sub_1
// CHECK-NOT:     dycl.raise
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = dycl.call_method "sum"(%x) : (tensor<1x4xf32>) -> tensor<f32>
  %zero = arith.constant 100 : i64
  %big = dycl.call_function "_operator.gt"(%s, %zero) : (tensor<f32>, i64) -> tensor<i1>
  %c = dycl.to_bool %big : tensor<i1>
  dycl.if %c {
    %msg = dycl.constant "input too large" : !dycl.pyobj
    dycl.raise "builtins.ValueError"(%msg) : !dycl.pyobj
    dycl.return
  } else {
    dycl.yield
  }
  %r = dycl.call_function "torch.tanh"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  dycl.return %r : tensor<1x4xf32>
}
