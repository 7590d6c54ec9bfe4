// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.make_tuple and dycl.get_item.

func.func @list_as_tuple(%a: tensor<2xf32>) {
  // expected-error @below {{'dycl.make_tuple' building a list must give !dycl.pyobj}}
  %l = dycl.make_tuple(%a, %a) {is_list} : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  func.return
}

// -----

func.func @tuple_type_mismatch(%a: tensor<2xf32>) {
  // expected-error @below {{'dycl.make_tuple' result tuple type does not match its elements}}
  %t = dycl.make_tuple(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>>
  func.return
}

// -----

func.func @tuple_not_tuple(%a: tensor<2xf32>) {
  // expected-error @below {{'dycl.make_tuple' must produce a tuple type or !dycl.pyobj, got tensor<2xf32>}}
  %t = dycl.make_tuple(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @get_item_out_of_range(%t: tuple<tensor<2xf32>, i64>) {
  // expected-error @below {{'dycl.get_item' index 2 out of range for a tuple of 2}}
  %x = dycl.get_item %t[2] : tuple<tensor<2xf32>, i64> -> tensor<2xf32>
  func.return
}

// -----

func.func @get_item_negative(%t: tuple<tensor<2xf32>, i64>) {
  // expected-error @below {{'dycl.get_item' index -1 out of range for a tuple of 2}}
  %x = dycl.get_item %t[-1] : tuple<tensor<2xf32>, i64> -> i64
  func.return
}

// -----

func.func @get_item_wrong_type(%t: tuple<tensor<2xf32>, i64>) {
  // expected-error @below {{'dycl.get_item' result type tensor<2xf32> does not match tuple element 1 of type i64}}
  %x = dycl.get_item %t[1] : tuple<tensor<2xf32>, i64> -> tensor<2xf32>
  func.return
}

// -----

func.func @get_item_not_tuple(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.get_item' source must be a tuple, got tensor<2xf32>}}
  %y = dycl.get_item %x[0] : tensor<2xf32> -> tensor<f32>
  func.return
}
