// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.to_bool and dycl.item.

func.func @to_bool_many_elements(%t: tensor<2x3xf32>) {
  // expected-error @below {{'dycl.to_bool' needs a one-element tensor, got tensor<2x3xf32> (bool() of a multi-element tensor is ambiguous)}}
  %c = dycl.to_bool %t : tensor<2x3xf32>
  func.return
}

// -----

func.func @to_bool_empty(%t: tensor<0xf32>) {
  // expected-error @below {{'dycl.to_bool' needs a one-element tensor, got tensor<0xf32> (bool() of a multi-element tensor is ambiguous)}}
  %c = dycl.to_bool %t : tensor<0xf32>
  func.return
}

// -----

func.func @item_of_pyobj(%p: !dycl.pyobj) {
  // expected-error @below {{'dycl.item' reads a tensor or converts a host scalar, got !dycl.pyobj}}
  %v = dycl.item %p : !dycl.pyobj -> i64
  func.return
}

// -----

func.func @item_many_elements(%t: tensor<4xi64>) {
  // expected-error @below {{'dycl.item' needs a one-element tensor, got tensor<4xi64>}}
  %v = dycl.item %t : tensor<4xi64> -> i64
  func.return
}

// -----

func.func @item_to_tensor(%t: tensor<f32>) {
  // expected-error @below {{'dycl.item' produces a host scalar (i1, i64, f64), got tensor<f32>}}
  %v = dycl.item %t : tensor<f32> -> tensor<f32>
  func.return
}

// -----

func.func @item_to_pyobj(%t: tensor<f32>) {
  // expected-error @below {{'dycl.item' produces a host scalar (i1, i64, f64), got !dycl.pyobj}}
  %v = dycl.item %t : tensor<f32> -> !dycl.pyobj
  func.return
}

// -----

// A `?` dimension does not help when a static one already exceeds 1.
func.func @to_bool_dynamic_many_elements(%t: tensor<?x2xf32>) {
  // expected-error @below {{'dycl.to_bool' needs a one-element tensor, got tensor<?x2xf32> (bool() of a multi-element tensor is ambiguous)}}
  %c = dycl.to_bool %t : tensor<?x2xf32>
  func.return
}

// -----

func.func @item_dynamic_many_elements(%t: tensor<3x?xi64>) {
  // expected-error @below {{'dycl.item' needs a one-element tensor, got tensor<3x?xi64>}}
  %v = dycl.item %t : tensor<3x?xi64> -> i64
  func.return
}

// -----

// Host scalars are i1, i64 and f64 only (Python's bool, int and float).
func.func @item_to_i32(%t: tensor<i32>) {
  // expected-error @below {{'dycl.item' produces a host scalar (i1, i64, f64), got i32}}
  %v = dycl.item %t : tensor<i32> -> i32
  func.return
}
