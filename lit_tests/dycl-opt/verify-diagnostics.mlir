// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics
// RUN: sed 's/exactly one block}}/two blocks}}/' %s | not dycl-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG
// RUN: sed '/expected-error @+1/d' %s | not dycl-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=UNEXPECTED
// RUN: sed 's/^  } else {$/  } else {\n    dycl.yield/' %s | not dycl-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING

// MLIR's --verify-diagnostics: expectations are matched by line and text, and
// required; a wrong text, an unexpected diagnostic or a missing one fails.

func.func @same_line(%c: i1) {
  dycl.if %c { } else { dycl.yield } // expected-error {{then region must have exactly one block}}
  func.return
}
// WRONG: stdin:[[# @LINE - 3]]:3: error: 'dycl.if' then region must have exactly one block
// WRONG: stdin:[[# @LINE - 4]]: error: expected error "then region must have two blocks" on line [[# @LINE - 4]] was not produced

// -----

func.func @below(%c: i1) {
  // expected-error @below {{else region must have exactly one block}}
  dycl.if %c {
    dycl.yield
  } else {
  }
  func.return
}
// MISSING: stdin:[[# @LINE - 7]]: error: expected error "else region must have exactly one block" on line {{[0-9]+}} was not produced

// -----

func.func @plus_n(%c: i1) {
  // expected-error @+1 {{else region must have exactly one block}}
  dycl.if %c {
    dycl.yield
  } else {
  }
  func.return
}
// UNEXPECTED: stdin:[[# @LINE - 8]]: error: unexpected error: stdin:[[# @LINE - 8]]:3: error: 'dycl.if' else region must have exactly one block

// -----

func.func @above(%c: i1) {
  dycl.if %c {
  // expected-error @above {{else region must have exactly one block}}
    dycl.yield
  } else {
  }
  func.return
}
