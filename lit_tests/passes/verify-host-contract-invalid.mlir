// RUN: not dycl-opt %s -p verify-host-contract 2>&1 | filecheck %s

// A sub-DNN with a branch, and a tensor region left on the host.
// CHECK:      error: the C++ host cannot run this program (2 operation(s) outside the host contract):
// CHECK-NEXT:   tensor work not outlined into a sub-DNN (run outline-subgraphs)
// CHECK-NEXT:   sub-DNN @sub_0 holds 'dycl.if'
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = dycl.tensor_region -> (tensor<4xf32>) {
    %y = dycl.call_function "torch.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %y : tensor<4xf32>
  }
  %z = dycl.call_subgraph @sub_0(%r) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %z : tensor<4xf32>
}
func.func @sub_0(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dycl.subgraph} {
  %c = arith.constant true
  %y = dycl.if %c -> (tensor<4xf32>) {
    dycl.yield %x : tensor<4xf32>
  } else {
    dycl.yield %x : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
