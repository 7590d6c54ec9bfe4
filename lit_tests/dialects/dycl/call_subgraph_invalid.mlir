// RUN: dycl-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every error of dycl.call_subgraph's callee check.

func.func @unknown_callee(%x: tensor<2xf32>) {
  %y = dycl.call_subgraph @missing(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}
// CHECK: Operation does not verify: 'dycl.call_subgraph' callee @missing is not a func.func in scope

// -----

func.func @not_marked(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}
func.func @host(%x: tensor<2xf32>) {
  %y = dycl.call_subgraph @not_marked(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}
// CHECK: Operation does not verify: 'dycl.call_subgraph' callee @not_marked lacks the dycl.subgraph marker

// -----

func.func @sub_0(%a: tensor<2xf32>) -> tensor<2xf32> attributes {dycl.subgraph} {
  func.return %a : tensor<2xf32>
}
func.func @host(%x: tensor<3xf32>) {
  %y = dycl.call_subgraph @sub_0(%x) : (tensor<3xf32>) -> tensor<2xf32>
  func.return
}
// CHECK: Operation does not verify: 'dycl.call_subgraph' operand types do not match @sub_0's inputs

// -----

func.func @sub_0(%a: tensor<2xf32>) -> tensor<2xf32> attributes {dycl.subgraph} {
  func.return %a : tensor<2xf32>
}
func.func @host(%x: tensor<2xf32>) {
  %y, %z = dycl.call_subgraph @sub_0(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}
// CHECK: Operation does not verify: 'dycl.call_subgraph' result types do not match @sub_0's outputs
