// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.set_attr.

func.func @bad_module_path(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.set_attr' module path 'dec..cell' is not a dotted submodule path}}
  dycl.set_attr "dec..cell" "h"(%x) : tensor<2xf32>
  func.return
}

// -----

func.func @bad_attribute_name(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.set_attr' attribute name 'hidden state' is not an identifier}}
  dycl.set_attr "" "hidden state"(%x) : tensor<2xf32>
  func.return
}
