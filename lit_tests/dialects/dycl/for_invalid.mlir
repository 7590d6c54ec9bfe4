// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.for, then errors of its custom syntax. The
// custom form derives the body arguments from iter_args, so the mismatches
// between them are written in the generic form.

func.func @body_arg_count(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' body must take the induction variable and 1 carried values, got 1 block arguments}}
  %r = "dycl.for"(%c0, %c0, %c0, %x) ({
  ^bb0(%i: i64):
    dycl.yield %x : tensor<2xf32>
  }) : (i64, i64, i64, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @induction_var_not_i64(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' induction variable must be i64}}
  %r = "dycl.for"(%c0, %c0, %c0, %x) ({
  ^bb0(%i: i32, %h: tensor<2xf32>):
    dycl.yield %h : tensor<2xf32>
  }) : (i64, i64, i64, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @body_arg_vs_iter_arg(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' body argument types must match its iter_args types}}
  %r = "dycl.for"(%c0, %c0, %c0, %x) ({
  ^bb0(%i: i64, %h: tensor<3xf32>):
    dycl.yield %h : tensor<3xf32>
  }) : (i64, i64, i64, tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @result_vs_body_arg(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' result types must match its body argument types}}
  %r = "dycl.for"(%c0, %c0, %c0, %x) ({
  ^bb0(%i: i64, %h: tensor<2xf32>):
    dycl.yield %h : tensor<2xf32>
  }) : (i64, i64, i64, tensor<2xf32>) -> !dycl.any
  func.return
}

// -----

func.func @body_yields_wrong_type(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' body region yields (i64) but the op produces (tensor<2xf32>)}}
  %r = dycl.for %i = %c0 to %c0 step %c0 iter_args(%h = %x) -> (tensor<2xf32>) {
    dycl.yield %i : i64
  }
  func.return
}

// -----

func.func @body_foreign_terminator() {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' body region must end with dycl.yield, dycl.return or dycl.break, got test.termop}}
  dycl.for %i = %c0 to %c0 step %c0 {
    "test.termop"() : () -> ()
  }
  func.return
}

// -----

func.func @bound_not_i64(%n: i32) {
  // expected-error @below {{operand is used with type i64, but has been previously used or defined with type i32}}
  dycl.for %i = %n to %n step %n {
    dycl.yield
  }
  func.return
}

// -----

func.func @iter_args_more_than_types(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' has 2 iter_args but 1 types}}
  %r = dycl.for %i = %c0 to %c0 step %c0 iter_args(%a = %x, %b = %x) -> (tensor<2xf32>) {
    dycl.yield %a, %b : tensor<2xf32>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @iter_args_fewer_than_types(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{'dycl.for' has 1 iter_args but 2 types}}
  %r, %s = dycl.for %i = %c0 to %c0 step %c0 iter_args(%a = %x) -> (tensor<2xf32>, tensor<2xf32>) {
    dycl.yield %a, %a : tensor<2xf32>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @init_type_mismatch(%x: tensor<2xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @below {{operand is used with type tensor<3xf32>, but has been previously used or defined with type tensor<2xf32>}}
  %r = dycl.for %i = %c0 to %c0 step %c0 iter_args(%a = %x) -> (tensor<3xf32>) {
    dycl.yield %a : tensor<3xf32>
  }
  func.return
}
