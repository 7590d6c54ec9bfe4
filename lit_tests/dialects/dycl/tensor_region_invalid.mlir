// RUN: dycl-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier error of dycl.tensor_region.

func.func @yields_wrong_type(%x: tensor<2xf32>) {
  %r = dycl.tensor_region -> (tensor<3xf32>) {
    dycl.yield %x : tensor<2xf32>
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.tensor_region' body region yields (tensor<2xf32>) but the op produces (tensor<3xf32>)

// -----

// A terminator that is not dycl.yield (dycl.return/break are rejected by their
// own verifiers first, see return_break_invalid.mlir).
func.func @ends_without_yield() {
  dycl.tensor_region {
    "test.termop"() : () -> ()
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.tensor_region' must end with dycl.yield

// -----

func.func @contains_to_bool(%x: tensor<i1>) {
  dycl.tensor_region {
    %c = dycl.to_bool %x : tensor<i1>
    dycl.yield
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.tensor_region' cannot contain host operation 'dycl.to_bool'

// -----

func.func @contains_if(%c: i1) {
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
// CHECK: Operation does not verify: 'dycl.tensor_region' cannot contain host operation 'dycl.if'

// -----

func.func @nested_region() {
  dycl.tensor_region {
    dycl.tensor_region {
      dycl.yield
    }
    dycl.yield
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.tensor_region' cannot contain host operation 'dycl.tensor_region'
