// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.tensor_region.

func.func @yields_wrong_type(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.tensor_region' body region yields (tensor<2xf32>) but the op produces (tensor<3xf32>)}}
  %r = dycl.tensor_region -> (tensor<3xf32>) {
    dycl.yield %x : tensor<2xf32>
  }
  func.return
}

// -----

// A terminator that is not dycl.yield (dycl.return/break are rejected by their
// own verifiers first, see return_break_invalid.mlir).
func.func @ends_without_yield() {
  // expected-error @below {{'dycl.tensor_region' must end with dycl.yield}}
  dycl.tensor_region {
    "test.termop"() : () -> ()
  }
  func.return
}

// -----

func.func @contains_to_bool(%x: tensor<i1>) {
  // expected-error @below {{'dycl.tensor_region' cannot contain host operation 'dycl.to_bool'}}
  dycl.tensor_region {
    %c = dycl.to_bool %x : tensor<i1>
    dycl.yield
  }
  func.return
}

// -----

func.func @contains_if(%c: i1) {
  // expected-error @below {{'dycl.tensor_region' cannot contain host operation 'dycl.if'}}
  dycl.tensor_region {
    dycl.if %c {
      dycl.yield
    } else {
      dycl.yield
    }
    dycl.yield
  }
  func.return
}

// -----

func.func @nested_region() {
  // expected-error @below {{'dycl.tensor_region' cannot contain host operation 'dycl.tensor_region'}}
  dycl.tensor_region {
    dycl.tensor_region {
      dycl.yield
    }
    dycl.yield
  }
  func.return
}
