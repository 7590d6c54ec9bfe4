// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// One chunk per verifier error of call_module, call_function and call_method.

func.func @kwargs_more_than_operands(%x: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_function' names 2 keyword arguments but has only 1 operands}}
  %y = dycl.call_function "torch.relu"(%x) {kwargs = ["input", "inplace"]} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @kwargs_repeated(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_module' has a repeated keyword argument name}}
  %z = dycl.call_module "fc"(%x, %y) {kwargs = ["a", "a"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @module_path_empty_part(%x: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_module' path 'layer1..conv' is not a dotted module path}}
  %y = dycl.call_module "layer1..conv"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @module_path_empty(%x: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_module' path '' is not a dotted module path}}
  %y = dycl.call_module ""(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @function_unqualified(%x: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_function' target 'relu' is not a qualified Python name (module.function)}}
  %y = dycl.call_function "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @function_not_identifier(%x: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_function' target 'torch.nn-functional.relu' is not a qualified Python name (module.function)}}
  %y = dycl.call_function "torch.nn-functional.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @method_not_identifier(%x: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_method' method 'x.mean' is not an identifier}}
  %y = dycl.call_method "x.mean"(%x) : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @method_no_receiver() {
  // expected-error @below {{'dycl.call_method' needs the receiver as its first positional operand}}
  %y = dycl.call_method "mean"() : () -> tensor<f32>
  func.return
}

// -----

// Every operand a keyword argument: still no receiver.
func.func @method_receiver_is_keyword(%x: tensor<4xf32>) {
  // expected-error @below {{'dycl.call_method' needs the receiver as its first positional operand}}
  %y = dycl.call_method "mean"(%x) {kwargs = ["self"]} : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

// The property constraint rejects non-string kwargs before verify_ runs, so
// _check_kwargs' own "kwargs must be an array of strings" cannot fire.
func.func @kwargs_not_strings(%x: tensor<4xf32>) {
  // expected-error @below {{1 : i64 should be of base attribute string}}
  %y = dycl.call_function "torch.relu"(%x) {kwargs = [1]} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
