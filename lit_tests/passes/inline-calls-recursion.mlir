// RUN: dycl-opt %s -p inline-calls 2>&1 | filecheck %s
// RUN: dycl-opt %s -p inline-calls | dycl-opt | filecheck %s
// RUN: not dycl-opt %s -p 'inline-calls{strict=true}' 2>&1 | filecheck %s --check-prefix=STRICT

// Recursive functions (mutually or directly, found on the call graph before
// inlining) are never inlined, so the pass terminates: their calls stay, with no
// diagnostic, and the functions stay since they are still used. A recursive
// function's calls to non-recursive helpers are still inlined.
// With strict=true the first call left in place is a located error.
// CHECK-NOT:   error
// CHECK-LABEL: func.func private @even
// CHECK:         func.call @odd(%{{.*}}) : (i64) -> i1
// CHECK-LABEL: func.func private @odd
// CHECK:         func.call @even(%{{.*}}) : (i64) -> i1
// STRICT: inline-calls-recursion.mlir:[[# @LINE + 6]]:5: error: cannot inline the call to @odd: it is recursive
// STRICT-NOT: error
func.func private @even(%n: i64) -> i1 {
  %c = dycl.to_bool %n : i64
  %r = dycl.if %c -> (i1) {
    %m = func.call @dec(%n) : (i64) -> i64
    %o = func.call @odd(%m) : (i64) -> i1
    dycl.yield %o : i1
  } else {
    %t = arith.constant true
    dycl.yield %t : i1
  }
  func.return %r : i1
}
func.func private @odd(%n: i64) -> i1 {
  %c = dycl.to_bool %n : i64
  %r = dycl.if %c -> (i1) {
    %m = func.call @dec(%n) : (i64) -> i64
    %e = func.call @even(%m) : (i64) -> i1
    dycl.yield %e : i1
  } else {
    %f = arith.constant false
    dycl.yield %f : i1
  }
  func.return %r : i1
}

// The helper called from the recursive functions is inlined into them and erased.
// CHECK-NOT:   func.func private @dec
// CHECK-LABEL: func.func private @fact
// CHECK-SAME:    (%[[N:.*]]: i64)
// CHECK:         dycl.if
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[M:.*]] = dycl.call_function "_operator.sub"(%[[N]], %[[ONE]])
// CHECK-NEXT:      %[[F:.*]] = func.call @fact(%[[M]]) : (i64) -> i64
func.func private @dec(%n: i64) -> i64 {
  %one = arith.constant 1 : i64
  %m = dycl.call_function "_operator.sub"(%n, %one) : (i64, i64) -> i64
  func.return %m : i64
}
func.func private @fact(%n: i64) -> i64 {
  %c = dycl.to_bool %n : i64
  %r = dycl.if %c -> (i64) {
    %m = func.call @dec(%n) : (i64) -> i64
    %f = func.call @fact(%m) : (i64) -> i64
    %p = dycl.call_function "_operator.mul"(%n, %f) : (i64, i64) -> i64
    dycl.yield %p : i64
  } else {
    %one = arith.constant 1 : i64
    dycl.yield %one : i64
  }
  func.return %r : i64
}

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: i64)
// CHECK-NEXT:    %{{.*}} = func.call @even(%[[X]]) : (i64) -> i1
// CHECK-NEXT:    %{{.*}} = func.call @fact(%[[X]]) : (i64) -> i64
func.func @forward(%x: i64) -> (i1, i64) {
  %e = func.call @even(%x) : (i64) -> i1
  %f = func.call @fact(%x) : (i64) -> i64
  dycl.return %e, %f : i1, i64
}
