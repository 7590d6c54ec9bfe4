// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Every verifier error of dycl.if, then errors of its custom syntax.

func.func @then_no_block(%c: i1) {
  dycl.if %c {
  } else {
    dycl.yield
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.if' then region must have exactly one block

// -----

func.func @else_two_blocks(%c: i1) {
  dycl.if %c {
    dycl.yield
  } else {
    dycl.yield
  ^bb1:
    dycl.yield
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.if' else region must have exactly one block

// -----

func.func @then_yields_too_few(%c: i1, %a: tensor<2xf32>) {
  %r = dycl.if %c -> (tensor<2xf32>) {
    dycl.yield
  } else {
    dycl.yield %a : tensor<2xf32>
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.if' then region yields () but the op produces (tensor<2xf32>)

// -----

func.func @else_yields_wrong_type(%c: i1, %a: tensor<2xf32>, %n: i64) {
  %r, %s = dycl.if %c -> (tensor<2xf32>, tensor<2xf32>) {
    dycl.yield %a, %a : tensor<2xf32>, tensor<2xf32>
  } else {
    dycl.yield %a, %n : tensor<2xf32>, i64
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.if' else region yields (tensor<2xf32>, i64) but the op produces (tensor<2xf32>, tensor<2xf32>)

// -----

// A branch without a terminator is caught by xDSL before dycl.if's own check.
func.func @then_no_terminator(%c: i1, %a: tensor<2xf32>) {
  dycl.if %c {
    %x = dycl.call_function "torch.relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  } else {
    dycl.yield
  }
  func.return
}
// CHECK: Operation dycl.call_function terminates block in single-block region but is not a terminator

// -----

// A terminator of another dialect: only yield/return/break leave a branch.
func.func @then_foreign_terminator(%c: i1) {
  dycl.if %c {
    "test.termop"() : () -> ()
  } else {
    dycl.yield
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.if' then region must end with dycl.yield, dycl.return or dycl.break, got test.termop

// -----

func.func @else_foreign_terminator(%c: i1) {
  dycl.if %c {
    dycl.yield
  } else {
    "test.termop"() : () -> ()
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.if' else region must end with dycl.yield, dycl.return or dycl.break, got test.termop

// -----

// dycl.condition reports it first (nested ops verify before their parent).
func.func @then_ends_with_condition(%c: i1) {
  dycl.if %c {
    dycl.condition %c
  } else {
    dycl.yield
  }
  func.return
}
// CHECK: Operation does not verify: 'dycl.condition' can only end the cond region of a dycl.while, not a dycl.if region

// -----

func.func @cond_not_i1(%c: i64) {
  dycl.if %c {
    dycl.yield
  } else {
    dycl.yield
  }
  func.return
}
// CHECK: operand 'cond' at position 0 does not verify:
// CHECK-NEXT: Expected attribute i1 but got i64

// -----

func.func @missing_else(%c: i1) {
  dycl.if %c {
    dycl.yield
  }
  func.return
}
// CHECK: if_invalid.mlir:[[# @LINE - 2]]:3
// CHECK-NEXT: func.return
// CHECK: Expected 'else'
