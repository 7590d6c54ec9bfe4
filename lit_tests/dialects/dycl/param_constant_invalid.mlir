// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.param and dycl.constant.

func.func @param_not_tensor() {
  // expected-error @below {{'dycl.param' must produce a tensor, got i64}}
  %p = dycl.param "fc.weight" : i64
  func.return
}

// -----

// The custom form takes the type from the dense value, so these use the generic form.
func.func @tensor_constant_not_dense() {
  // expected-error @below {{'dycl.constant' of tensor type needs a dense elements value}}
  %t = "dycl.constant"() <{value = "abc"}> : () -> tensor<2xf32>
  func.return
}

// -----

func.func @tensor_constant_type_mismatch() {
  // expected-error @below {{'dycl.constant' value type tensor<2xf32> does not match result type tensor<3xf32>}}
  %t = "dycl.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @pyobj_constant_integer() {
  // expected-error @below {{'dycl.constant' of type !dycl.pyobj needs a string, none, #dycl.global or an array of literals}}
  %c = dycl.constant 3 : i64 : !dycl.pyobj
  func.return
}

// -----

// An array may only hold literals: a type is not one.
func.func @pyobj_constant_array_of_type() {
  // expected-error @below {{'dycl.constant' of type !dycl.pyobj needs a string, none, #dycl.global or an array of literals}}
  %c = dycl.constant [1 : i64, f32] : !dycl.pyobj
  func.return
}

// -----

func.func @constant_host_scalar() {
  // expected-error @below {{'dycl.constant' result must be a tensor or !dycl.pyobj, got i64 (use arith.constant for host scalars)}}
  %c = dycl.constant "x" : i64
  func.return
}
