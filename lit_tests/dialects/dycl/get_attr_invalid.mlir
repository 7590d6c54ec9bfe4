// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.get_attr, and of dycl.set_attr's store in place.

func.func @bad_module_path() {
  // expected-error @below {{'dycl.get_attr' module path 'dec..cell' is not a dotted submodule path}}
  %h = dycl.get_attr "dec..cell" "h" : i64
  func.return
}

// -----

func.func @bad_attribute_name() {
  // expected-error @below {{'dycl.get_attr' attribute name 'hidden state' is not an identifier}}
  %h = dycl.get_attr "" "hidden state" : i64
  func.return
}

// -----

func.func @dynamic_shape() {
  // expected-error @below {{'dycl.get_attr' reads a tensor of static shape or an i64, f64 or i1, got tensor<?x4xf32>}}
  %h = dycl.get_attr "" "h" : tensor<?x4xf32>
  func.return
}

// -----

func.func @python_object() {
  // expected-error @below {{'dycl.get_attr' reads a tensor of static shape or an i64, f64 or i1, got !dycl.pyobj}}
  %h = dycl.get_attr "" "h" : !dycl.pyobj
  func.return
}

// -----

func.func @copy_of_a_number() {
  // expected-error @below {{'dycl.get_attr' copies tensors only, got i64}}
  %h = dycl.get_attr "" "steps" {copy} : i64
  func.return
}

// -----

func.func @store_in_place_of_a_number(%n: i64) {
  // expected-error @below {{'dycl.set_attr' in place stores a tensor, got i64}}
  dycl.set_attr "" "steps"(%n) {in_place} : i64
  func.return
}
