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
