// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.while, then errors of its custom syntax.

func.func @zero_bound(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' max_iterations must be positive}}
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 0 cond {
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<2xf32>):
    dycl.yield %b : tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_bound(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' max_iterations must be positive}}
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations -3 cond {
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<2xf32>):
    dycl.yield %b : tensor<2xf32>
  }
  func.return
}

// -----

// The custom form types the inits by the result types, so this one is generic.
func.func @init_vs_result(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' iter_args types must match its result types}}
  %r = "dycl.while"(%x) <{max_iterations = 4 : i64}> ({
  ^bb0(%h: tensor<3xf32>):
    dycl.condition %c
  }, {
  ^bb1(%b: tensor<3xf32>):
    dycl.yield %b : tensor<3xf32>
  }) : (tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @cond_args(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' cond region arguments must match its result types}}
  %r = "dycl.while"(%x) <{max_iterations = 4 : i64}> ({
  ^bb0(%h: tensor<2xf32>, %extra: i64):
    dycl.condition %c
  }, {
  ^bb1(%b: tensor<2xf32>):
    dycl.yield %b : tensor<2xf32>
  }) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @body_args(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' body region arguments must match its result types}}
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 4 cond {
    dycl.condition %c
  } do {
  ^bb0(%b: !dycl.any):
    dycl.yield %b : !dycl.any
  }
  func.return
}

// -----

func.func @cond_without_condition(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.while' cond region must end with dycl.condition}}
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 4 cond {
    dycl.yield %h : tensor<2xf32>
  } do {
  ^bb0(%b: tensor<2xf32>):
    dycl.yield %b : tensor<2xf32>
  }
  func.return
}

// -----

func.func @body_yields_wrong_type(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' body region yields (i1) but the op produces (tensor<2xf32>)}}
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 4 cond {
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<2xf32>):
    dycl.yield %c : i1
  }
  func.return
}

// -----

func.func @cond_foreign_terminator(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.while' cond region must end with dycl.condition, got test.termop}}
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 4 cond {
    "test.termop"() : () -> ()
  } do {
  ^bb0(%b: tensor<2xf32>):
    dycl.yield %b : tensor<2xf32>
  }
  func.return
}

// -----

func.func @body_foreign_terminator(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' body region must end with dycl.yield, dycl.return or dycl.break, got test.termop}}
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 4 cond {
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<2xf32>):
    "test.termop"() : () -> ()
  }
  func.return
}

// -----

func.func @body_ends_with_condition(%x: tensor<2xf32>, %c: i1) {
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 4 cond {
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<2xf32>):
    // expected-error @below {{'dycl.condition' can only end the cond region of a dycl.while, not the body of a dycl.while}}
    dycl.condition %c
  }
  func.return
}

// -----

// dycl.condition only ends the cond region of a dycl.while.
func.func @condition_outside_while(%c: i1) {
  dycl.if %c {
    // expected-error @below {{'dycl.condition' can only end the cond region of a dycl.while, not a dycl.if region}}
    dycl.condition %c
  } else {
    dycl.yield
  }
  func.return
}

// -----

func.func @iter_args_count(%x: tensor<2xf32>, %c: i1) {
  // expected-error @below {{'dycl.while' has 2 iter_args but 1 types}}
  %r = dycl.while (%a = %x, %b = %x) -> (tensor<2xf32>) max_iterations 4 cond {
    dycl.condition %c
  } do {
  ^bb0(%p: tensor<2xf32>, %q: tensor<2xf32>):
    dycl.yield %p, %q : tensor<2xf32>, tensor<2xf32>
  }
  func.return
}
