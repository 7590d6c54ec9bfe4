// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of the run-time list ops.

func.func @mixed_elements(%a: i64, %f: f64) {
  // expected-error @below {{'dycl.make_list' puts a f64 into a list of i64}}
  %l = dycl.make_list(%a, %f) : (i64, f64) -> !dycl.list<i64>
  func.return
}

// -----

func.func @append_other_type(%l: !dycl.list<i64>, %t: tensor<2xf32>) {
  // expected-error @below {{'dycl.list_append' puts a tensor<2xf32> into a list of i64}}
  %m = dycl.list_append %l, %t : !dycl.list<i64>, tensor<2xf32> -> !dycl.list<i64>
  func.return
}

// -----

func.func @append_changes_element(%l: !dycl.list<i64>, %a: i64) {
  // expected-error @below {{'dycl.list_append' of a !dycl.list<i64> cannot give a !dycl.list<f64>}}
  %m = dycl.list_append %l, %a : !dycl.list<i64>, i64 -> !dycl.list<f64>
  func.return
}

// -----

func.func @get_other_type(%l: !dycl.list<i64>, %i: i64) {
  // expected-error @below {{'dycl.list_get' of a list of i64 gives f64}}
  %v = dycl.list_get %l[%i] : !dycl.list<i64> -> f64
  func.return
}

// -----

func.func @get_float_index(%l: !dycl.list<i64>, %i: f64) {
  // expected-error @below {{operand 'index' at position 1 does not verify}}
  %v = "dycl.list_get"(%l, %i) : (!dycl.list<i64>, f64) -> i64
  func.return
}

// -----

func.func @len_of_tensor(%t: tensor<2xf32>) {
  // expected-error @below {{operand 'source' at position 0 does not verify}}
  %n = "dycl.list_len"(%t) : (tensor<2xf32>) -> i64
  func.return
}
