// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.return and dycl.break.

// expected-error @below {{'dycl.return' must be inside a func.func}}
dycl.return

// -----

func.func @return_wrong_type(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @below {{'dycl.return' returns (tensor<2xf32>) but the enclosing function returns (tensor<3xf32>)}}
  dycl.return %a : tensor<2xf32>
}

// -----

func.func @return_wrong_count(%c: i1, %a: tensor<2xf32>) -> tensor<2xf32> {
  dycl.if %c {
    // expected-error @below {{'dycl.return' returns () but the enclosing function returns (tensor<2xf32>)}}
    dycl.return
  } else {
    dycl.yield
  }
  dycl.return %a : tensor<2xf32>
}

// -----

// The return's own check runs before the region's (nested ops verify first).
func.func @return_from_tensor_region(%a: tensor<2xf32>) -> tensor<2xf32> {
  dycl.tensor_region {
    // expected-error @below {{'dycl.return' cannot leave a dycl.tensor_region}}
    dycl.return %a : tensor<2xf32>
  }
  dycl.return %a : tensor<2xf32>
}

// -----

func.func @break_outside_loop(%c: i1) {
  dycl.if %c {
    // expected-error @below {{'dycl.break' must be inside a dycl.for or dycl.while}}
    dycl.break
  } else {
    dycl.yield
  }
  func.return
}

// -----

func.func @break_from_tensor_region(%n: i64) {
  dycl.for %i = %n to %n step %n {
    dycl.tensor_region {
      // expected-error @below {{'dycl.break' cannot leave a dycl.tensor_region}}
      dycl.break
    }
    dycl.yield
  }
  func.return
}

// -----

func.func @break_wrong_types(%x: tensor<2xf32>, %n: i64, %c: i1) {
  %r = dycl.for %i = %n to %n step %n iter_args(%h = %x) -> (tensor<2xf32>) {
    dycl.if %c {
      // expected-error @below {{'dycl.break' passes (i64) but the loop produces (tensor<2xf32>)}}
      dycl.break %i : i64
    } else {
      dycl.yield
    }
    dycl.yield %h : tensor<2xf32>
  }
  func.return
}

// -----

// The break targets the inner loop, which produces nothing.
func.func @break_targets_inner(%x: tensor<2xf32>, %n: i64, %c: i1) {
  %r = dycl.for %i = %n to %n step %n iter_args(%h = %x) -> (tensor<2xf32>) {
    dycl.for %j = %n to %n step %n {
      // expected-error @below {{'dycl.break' passes (tensor<2xf32>) but the loop produces ()}}
      dycl.break %h : tensor<2xf32>
    }
    dycl.yield %h : tensor<2xf32>
  }
  func.return
}
