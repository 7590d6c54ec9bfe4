// RUN: dycl-opt %s -p peel-loops | filecheck %s
// RUN: dycl-opt %s -p peel-loops | dycl-opt | filecheck %s
// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s --check-prefix=INFER

// `cost = 0; while x.sum() > 1: x = x * 0.5; cost = cost + x.mean()`: the first
// iteration runs on its own, on the initial values, then the loop (marked
// dycl.peeled, its bound one less) carries what it made; no iteration: the
// initial values.
// CHECK-LABEL: func.func @forward
// CHECK:         %s = dycl.call_method "sum"(%x) : (tensor<4xf32>) -> !dycl.any
// CHECK-NEXT:    %c = dycl.to_bool %s : !dycl.any
// CHECK-NEXT:    %h, %cost = dycl.if %c -> (!dycl.any, !dycl.any) {
// CHECK-NEXT:      %h2 = dycl.call_function "_operator.mul"(%x, %half) : (tensor<4xf32>, f64) -> !dycl.any
// CHECK-NEXT:      %m = dycl.call_method "mean"(%h2) : (!dycl.any) -> !dycl.any
// CHECK-NEXT:      %c2 = dycl.call_function "_operator.add"(%zero, %m) : (i64, !dycl.any) -> !dycl.any
// CHECK-NEXT:      %[[H:.*]], %[[COST:.*]] = dycl.while (%h0 = %h2, %c0 = %c2) -> (!dycl.any, !dycl.any) max_iterations 7 cond {
// CHECK:           } {dycl.peeled = 1 : i64}
// CHECK-NEXT:      dycl.yield %[[H]], %[[COST]] : !dycl.any, !dycl.any
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %x, %zero : tensor<4xf32>, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %cost : !dycl.any
// CHECK-NOT:     dycl.peel

// shape-inference peels it on its own (the carried i64 becomes a tensor), and the
// two paths after it get their own types: the int 0, or a 0-d tensor.
// INFER-LABEL: func.func @forward
// INFER:         dycl.if %c {
// INFER:           %{{.*}}, %[[COST:.*]] = dycl.while {{.*}} -> (tensor<4xf32>, tensor<f32>) max_iterations 7
// INFER:           dycl.return %[[COST]] : tensor<f32>
// INFER-NEXT:    } else {
// INFER-NEXT:      dycl.yield
// INFER-NEXT:    }
// INFER-NEXT:    dycl.return %zero : i64
func.func @forward(%x: tensor<4xf32>) -> !dycl.any {
  %zero = arith.constant 0 : i64
  %half = arith.constant 5.000000e-01 : f64
  %h, %cost = dycl.while (%h0 = %x, %c0 = %zero) -> (!dycl.any, !dycl.any) max_iterations 8 cond {
    %s = dycl.call_method "sum"(%h0) : (!dycl.any) -> !dycl.any
    %c = dycl.to_bool %s : !dycl.any
    dycl.condition %c
  } do {
  ^bb0(%h1: !dycl.any, %c1: !dycl.any):
    %h2 = dycl.call_function "_operator.mul"(%h1, %half) : (!dycl.any, f64) -> !dycl.any
    %m = dycl.call_method "mean"(%h2) : (!dycl.any) -> !dycl.any
    %c2 = dycl.call_function "_operator.add"(%c1, %m) : (!dycl.any, !dycl.any) -> !dycl.any
    dycl.yield %h2, %c2 : !dycl.any, !dycl.any
  } {dycl.peel}
  dycl.return %cost : !dycl.any
}

// `for i in range(n)` with a run-time n: the first iteration behind `if 0 < n`,
// the loop then from `0 + 1`.
// CHECK-LABEL: func.func @over_range
// CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %zero, %n : i64
// CHECK-NEXT:    %[[R:.*]] = dycl.if %[[RUNS]] -> (!dycl.any) {
// CHECK-NEXT:      %[[M:.*]] = dycl.call_method "mean"(%x) : (tensor<4xf32>) -> !dycl.any
// CHECK-NEXT:      %[[A:.*]] = dycl.call_function "_operator.add"(%zero, %[[M]]) : (i64, !dycl.any) -> !dycl.any
// CHECK-NEXT:      %[[START:.*]] = arith.addi %zero, %one : i64
// CHECK-NEXT:      %[[W:.*]] = dycl.for %{{.*}} = %[[START]] to %n step %one iter_args(%{{.*}} = %[[A]]) -> (!dycl.any) {
// CHECK:           } {dycl.peeled = 1 : i64}
// CHECK-NEXT:      dycl.yield %[[W]] : !dycl.any
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %zero : i64
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : !dycl.any
func.func @over_range(%x: tensor<4xf32>, %n: i64) -> !dycl.any {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %cost = dycl.for %i = %zero to %n step %one iter_args(%c0 = %zero) -> (!dycl.any) {
    %m = dycl.call_method "mean"(%x) : (tensor<4xf32>) -> !dycl.any
    %c1 = dycl.call_function "_operator.add"(%c0, %m) : (!dycl.any, !dycl.any) -> !dycl.any
    dycl.yield %c1 : !dycl.any
  } {dycl.peel}
  dycl.return %cost : !dycl.any
}

// `past = None; while True: ...; if s: break`: a `break` in the first iteration
// skips the loop. The code after each `dycl.if` that may break moves into the
// branches that go on, the copy yields whether it broke (an i1), and the loop
// runs only where it did not (on what that iteration made).
// CHECK-LABEL: func.func @with_break
// CHECK:         %h, %cost = dycl.if %t -> (!dycl.any, !dycl.any) {
// CHECK-NEXT:      %h2 = dycl.call_function "_operator.mul"(%x, %half) : (tensor<4xf32>, f64) -> !dycl.any
// CHECK-NEXT:      %m = dycl.call_method "mean"(%h2) : (!dycl.any) -> !dycl.any
// CHECK-NEXT:      %s = dycl.to_bool %m : !dycl.any
// CHECK-NEXT:      %[[H:.*]], %[[C:.*]], %[[BROKE:.*]] = dycl.if %s -> (!dycl.any, !dycl.any, i1) {
// CHECK-NEXT:        %[[T:.*]] = arith.constant true
// CHECK-NEXT:        dycl.yield %h2, %h2, %[[T]] : !dycl.any, !dycl.any, i1
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[F:.*]] = arith.constant false
// CHECK-NEXT:        dycl.yield %h2, %h2, %[[F]] : !dycl.any, !dycl.any, i1
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[RH:.*]], %[[RC:.*]] = dycl.if %[[BROKE]] -> (!dycl.any, !dycl.any) {
// CHECK-NEXT:        dycl.yield %[[H]], %[[C]] : !dycl.any, !dycl.any
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[LH:.*]], %[[LC:.*]] = dycl.while (%h0 = %[[H]], %c0 = %[[C]])
// CHECK:             dycl.break %h2_1, %h2_1 : !dycl.any, !dycl.any
// CHECK:           } {dycl.peeled = 1 : i64}
// CHECK-NEXT:        dycl.yield %[[LH]], %[[LC]] : !dycl.any, !dycl.any
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield %[[RH]], %[[RC]] : !dycl.any, !dycl.any
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %x, %none : tensor<4xf32>, !dycl.pyobj
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %h : !dycl.any
func.func @with_break(%x: tensor<4xf32>) -> !dycl.any {
  %none = dycl.constant none : !dycl.pyobj
  %half = arith.constant 5.000000e-01 : f64
  %h, %cost = dycl.while (%h0 = %x, %c0 = %none) -> (!dycl.any, !dycl.any) cond {
    %t = arith.constant true
    dycl.condition %t
  } do {
  ^bb0(%h1: !dycl.any, %c1: !dycl.any):
    %h2 = dycl.call_function "_operator.mul"(%h1, %half) : (!dycl.any, f64) -> !dycl.any
    %m = dycl.call_method "mean"(%h2) : (!dycl.any) -> !dycl.any
    %s = dycl.to_bool %m : !dycl.any
    dycl.if %s {
      dycl.break %h2, %h2 : !dycl.any, !dycl.any
    } else {
      dycl.yield
    }
    dycl.yield %h2, %h2 : !dycl.any, !dycl.any
  } {dycl.peel}
  dycl.return %h : !dycl.any
}

// A `for` over constant bounds whose first iteration may break: the copy runs
// before the loop (no `if` on the bounds), the loop behind `if broke`.
// CHECK-LABEL: func.func @for_with_break
// CHECK:         %[[C:.*]], %[[BROKE:.*]] = dycl.if %s -> (!dycl.any, i1) {
// CHECK:         %[[R:.*]] = dycl.if %[[BROKE]] -> (!dycl.any) {
// CHECK-NEXT:      dycl.yield %[[C]] : !dycl.any
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %{{.*}} = dycl.for %{{.*}} = %{{.*}} to %three step %one iter_args(%{{.*}} = %[[C]]) -> (!dycl.any) {
// CHECK:         dycl.return %[[R]] : !dycl.any
func.func @for_with_break(%x: tensor<4xf32>) -> !dycl.any {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %three = arith.constant 3 : i64
  %r = dycl.for %i = %zero to %three step %one iter_args(%c0 = %zero) -> (!dycl.any) {
    %m = dycl.call_method "mean"(%x) : (tensor<4xf32>) -> !dycl.any
    %c1 = dycl.call_function "_operator.add"(%c0, %m) : (!dycl.any, !dycl.any) -> !dycl.any
    %s = dycl.to_bool %c1 : !dycl.any
    dycl.if %s {
      dycl.break %c1 : !dycl.any
    } else {
      dycl.yield
    }
    dycl.yield %c1 : !dycl.any
  } {dycl.peel}
  dycl.return %r : !dycl.any
}
