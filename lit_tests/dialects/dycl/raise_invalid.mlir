// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.raise, and a return that is not right after one.

func.func @not_a_class_name() {
  // expected-error @below {{'dycl.raise' needs the qualified name of an exception class (e.g. builtins.ValueError), got 'ValueError'}}
  dycl.raise "ValueError"()
  func.return
}

// -----

func.func @repeated_keyword(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.raise' has a repeated keyword argument name}}
  dycl.raise "builtins.ValueError"(%x, %x) {kwargs = ["a", "a"]} : tensor<2xf32>, tensor<2xf32>
  func.return
}

// -----

func.func @message_without_its_values(%i: i64) {
  // expected-error @below {{'dycl.raise' with a message needs one operand per '{}' in it and no keywords, got 1 operands for 'index {} of {}'}}
  dycl.raise "builtins.IndexError"(%i) {message = "index {} of {}"} : i64
  func.return
}

// -----

func.func @empty_return_without_raise(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @below {{'dycl.return' returns () but the enclosing function returns (tensor<2xf32>)}}
  dycl.return
}
