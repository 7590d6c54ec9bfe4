// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.if, then errors of its custom syntax.

func.func @then_no_block(%c: i1) {
  // expected-error @below {{'dycl.if' then region must have exactly one block}}
  dycl.if %c {
  } else {
    dycl.yield
  }
  func.return
}

// -----

func.func @else_two_blocks(%c: i1) {
  // expected-error @below {{'dycl.if' else region must have exactly one block}}
  dycl.if %c {
    dycl.yield
  } else {
    dycl.yield
  ^bb1:
    dycl.yield
  }
  func.return
}

// -----

func.func @then_yields_too_few(%c: i1, %a: tensor<2xf32>) {
  // expected-error @below {{'dycl.if' then region yields () but the op produces (tensor<2xf32>)}}
  %r = dycl.if %c -> (tensor<2xf32>) {
    dycl.yield
  } else {
    dycl.yield %a : tensor<2xf32>
  }
  func.return
}

// -----

func.func @else_yields_wrong_type(%c: i1, %a: tensor<2xf32>, %n: i64) {
  // expected-error @below {{'dycl.if' else region yields (tensor<2xf32>, i64) but the op produces (tensor<2xf32>, tensor<2xf32>)}}
  %r, %s = dycl.if %c -> (tensor<2xf32>, tensor<2xf32>) {
    dycl.yield %a, %a : tensor<2xf32>, tensor<2xf32>
  } else {
    dycl.yield %a, %n : tensor<2xf32>, i64
  }
  func.return
}

// -----

// A branch without a terminator is caught by xDSL before dycl.if's own check.
func.func @then_no_terminator(%c: i1, %a: tensor<2xf32>) {
  dycl.if %c {
    // expected-error @below {{Operation dycl.call_function terminates block in single-block region but is not a terminator}}
    %x = dycl.call_function "torch.relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  } else {
    dycl.yield
  }
  func.return
}

// -----

// A terminator of another dialect: only yield/return/break leave a branch.
func.func @then_foreign_terminator(%c: i1) {
  // expected-error @below {{'dycl.if' then region must end with dycl.yield, dycl.return or dycl.break, got test.termop}}
  dycl.if %c {
    "test.termop"() : () -> ()
  } else {
    dycl.yield
  }
  func.return
}

// -----

func.func @else_foreign_terminator(%c: i1) {
  // expected-error @below {{'dycl.if' else region must end with dycl.yield, dycl.return or dycl.break, got test.termop}}
  dycl.if %c {
    dycl.yield
  } else {
    "test.termop"() : () -> ()
  }
  func.return
}

// -----

// dycl.condition reports it first (nested ops verify before their parent).
func.func @then_ends_with_condition(%c: i1) {
  dycl.if %c {
    // expected-error @below {{'dycl.condition' can only end the cond region of a dycl.while, not a dycl.if region}}
    dycl.condition %c
  } else {
    dycl.yield
  }
  func.return
}

// -----

func.func @cond_not_i1(%c: i64) {
  // expected-error @below {{operand is used with type i1, but has been previously used or defined with type i64}}
  dycl.if %c {
    dycl.yield
  } else {
    dycl.yield
  }
  func.return
}

// -----

func.func @missing_else(%c: i1) {
  dycl.if %c {
    dycl.yield
  }
  // expected-error @below {{Expected 'else'}}
  func.return
}
