// RUN: dycl-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier error of dycl.to_bool and dycl.item.

func.func @to_bool_many_elements(%t: tensor<2x3xf32>) {
  %c = dycl.to_bool %t : tensor<2x3xf32>
  func.return
}
// CHECK: Operation does not verify: 'dycl.to_bool' needs a one-element tensor, got tensor<2x3xf32> (bool() of a multi-element tensor is ambiguous)

// -----

func.func @to_bool_empty(%t: tensor<0xf32>) {
  %c = dycl.to_bool %t : tensor<0xf32>
  func.return
}
// CHECK: Operation does not verify: 'dycl.to_bool' needs a one-element tensor, got tensor<0xf32> (bool() of a multi-element tensor is ambiguous)

// -----

func.func @item_of_pyobj(%p: !dycl.pyobj) {
  %v = dycl.item %p : !dycl.pyobj -> i64
  func.return
}
// CHECK: Operation does not verify: 'dycl.item' reads a tensor or converts a host scalar, got !dycl.pyobj

// -----

func.func @item_many_elements(%t: tensor<4xi64>) {
  %v = dycl.item %t : tensor<4xi64> -> i64
  func.return
}
// CHECK: Operation does not verify: 'dycl.item' needs a one-element tensor, got tensor<4xi64>

// -----

func.func @item_to_tensor(%t: tensor<f32>) {
  %v = dycl.item %t : tensor<f32> -> tensor<f32>
  func.return
}
// CHECK: Operation does not verify: 'dycl.item' produces a host scalar (i1, i64, f64), got tensor<f32>

// -----

func.func @item_to_pyobj(%t: tensor<f32>) {
  %v = dycl.item %t : tensor<f32> -> !dycl.pyobj
  func.return
}
// CHECK: Operation does not verify: 'dycl.item' produces a host scalar (i1, i64, f64), got !dycl.pyobj

// -----

// A `?` dimension does not help when a static one already exceeds 1.
func.func @to_bool_dynamic_many_elements(%t: tensor<?x2xf32>) {
  %c = dycl.to_bool %t : tensor<?x2xf32>
  func.return
}
// CHECK: Operation does not verify: 'dycl.to_bool' needs a one-element tensor, got tensor<?x2xf32> (bool() of a multi-element tensor is ambiguous)

// -----

func.func @item_dynamic_many_elements(%t: tensor<3x?xi64>) {
  %v = dycl.item %t : tensor<3x?xi64> -> i64
  func.return
}
// CHECK: Operation does not verify: 'dycl.item' needs a one-element tensor, got tensor<3x?xi64>

// -----

// Host scalars are i1, i64 and f64 only (Python's bool, int and float).
func.func @item_to_i32(%t: tensor<i32>) {
  %v = dycl.item %t : tensor<i32> -> i32
  func.return
}
// CHECK: Operation does not verify: 'dycl.item' produces a host scalar (i1, i64, f64), got i32
