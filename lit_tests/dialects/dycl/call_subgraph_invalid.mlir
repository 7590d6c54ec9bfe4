// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every error of dycl.call_subgraph's callee check.

func.func @unknown_callee(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.call_subgraph' callee @missing is not a func.func in scope}}
  %y = dycl.call_subgraph @missing(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @not_marked(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}
func.func @host(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.call_subgraph' callee @not_marked lacks the dycl.subgraph marker}}
  %y = dycl.call_subgraph @not_marked(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @sub_0(%a: tensor<2xf32>) -> tensor<2xf32> attributes {dycl.subgraph} {
  func.return %a : tensor<2xf32>
}
func.func @host(%x: tensor<3xf32>) {
  // expected-error @below {{'dycl.call_subgraph' operand types do not match @sub_0's inputs}}
  %y = dycl.call_subgraph @sub_0(%x) : (tensor<3xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @sub_0(%a: tensor<2xf32>) -> tensor<2xf32> attributes {dycl.subgraph} {
  func.return %a : tensor<2xf32>
}
func.func @host(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.call_subgraph' result types do not match @sub_0's outputs}}
  %y, %z = dycl.call_subgraph @sub_0(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}
