// RUN: dycl-opt %s -p unroll-loops | filecheck %s
// RUN: dycl-opt %s -p 'unroll-loops{max-trip-count=2}' | filecheck %s --check-prefix=MAX2

// Three constant trips: the body is copied three times, the induction variable
// becoming a constant per copy and the carried value threaded through.
// With max-trip-count=2 the loop stays rolled.
// CHECK-LABEL: func.func @three_trips
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : i64
// CHECK-NEXT:    %{{.*}} = arith.constant 3 : i64
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : i64
// CHECK-NEXT:    %[[I0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[H0:.*]] = dycl.call_module "blocks"(%[[X]], %[[I0]]) : (tensor<1x4xf32>, i64) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[I1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[H1:.*]] = dycl.call_module "blocks"(%[[H0]], %[[I1]]) : (tensor<1x4xf32>, i64) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[I2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[H2:.*]] = dycl.call_module "blocks"(%[[H1]], %[[I2]]) : (tensor<1x4xf32>, i64) -> tensor<1x4xf32>
// CHECK-NEXT:    dycl.return %[[H2]] : tensor<1x4xf32>
// MAX2-LABEL:  func.func @three_trips
// MAX2:          %[[R:.*]] = dycl.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[H:.*]] = %{{.*}}) -> (tensor<1x4xf32>) {
// MAX2-NEXT:       %[[N:.*]] = dycl.call_module "blocks"(%[[H]], %[[I]])
// MAX2-NEXT:       dycl.yield %[[N]] : tensor<1x4xf32>
// MAX2-NEXT:     }
// MAX2-NEXT:     dycl.return %[[R]] : tensor<1x4xf32>
func.func @three_trips(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %c0 = arith.constant 0 : i64
  %c3 = arith.constant 3 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<1x4xf32>) {
    %n = dycl.call_module "blocks"(%h, %i) : (tensor<1x4xf32>, i64) -> tensor<1x4xf32>
    dycl.yield %n : tensor<1x4xf32>
  }
  dycl.return %r : tensor<1x4xf32>
}

// range(1, 5, 2) has two trips, i = 1 and i = 3: unrolled under both limits.
// CHECK-LABEL: func.func @strided
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    arith.constant 5 : i64
// CHECK-NEXT:    arith.constant 2 : i64
// CHECK-NEXT:    %[[I0:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[A:.*]] = dycl.call_method "roll"(%[[X]], %[[I0]])
// CHECK-NEXT:    %[[I1:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[B:.*]] = dycl.call_method "roll"(%[[A]], %[[I1]])
// CHECK-NEXT:    dycl.return %[[B]] : tensor<4xf32>
// MAX2-LABEL:  func.func @strided
// MAX2-NOT:      dycl.for
// MAX2:          dycl.call_method "roll"
// MAX2-NEXT:     arith.constant 3 : i64
// MAX2-NEXT:     dycl.call_method "roll"
// MAX2-NEXT:     dycl.return
func.func @strided(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : i64
  %c5 = arith.constant 5 : i64
  %c2 = arith.constant 2 : i64
  %r = dycl.for %i = %c1 to %c5 step %c2 iter_args(%h = %x) -> (tensor<4xf32>) {
    %n = dycl.call_method "roll"(%h, %i) : (tensor<4xf32>, i64) -> tensor<4xf32>
    dycl.yield %n : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}

// No trips: the results are the initial values.
// CHECK-LABEL: func.func @zero_trips
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     dycl.for
// CHECK-NOT:     dycl.call_module
// CHECK:         dycl.return %[[X]] : tensor<4xf32>
func.func @zero_trips(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c2 = arith.constant 2 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c2 to %c2 step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %n = dycl.call_module "blocks"(%h) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %n : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}

// An early return in the body is kept in every copy; the inner constant loop
// of a loop with a run-time bound is unrolled, the outer one stays rolled.
// CHECK-LABEL: func.func @nested_and_early_return
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i64)
// CHECK:         dycl.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      arith.constant 0 : i64
// CHECK-NEXT:      %[[C0:.*]] = dycl.to_bool %[[N]] : i64
// CHECK-NEXT:      dycl.if %[[C0]] {
// CHECK-NEXT:        dycl.return %[[X]] : tensor<4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        dycl.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      arith.constant 1 : i64
// CHECK-NEXT:      %[[C1:.*]] = dycl.to_bool %[[N]] : i64
// CHECK-NEXT:      dycl.if %[[C1]] {
// CHECK-NEXT:        dycl.return %[[X]] : tensor<4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        dycl.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[X]] : tensor<4xf32>
func.func @nested_and_early_return(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c2 = arith.constant 2 : i64
  %c1 = arith.constant 1 : i64
  dycl.for %j = %c0 to %n step %c1 {
    dycl.for %i = %c0 to %c2 step %c1 {
      %c = dycl.to_bool %n : i64
      dycl.if %c {
        dycl.return %x : tensor<4xf32>
      } else {
        dycl.yield
      }
      dycl.yield
    }
    dycl.yield
  }
  dycl.return %x : tensor<4xf32>
}

// A loop with a dycl.break of its own stays rolled; a break of a nested loop
// does not keep the outer loop from unrolling.
// CHECK-LABEL: func.func @breaks
// CHECK:         %[[R:.*]] = dycl.for
// CHECK:           dycl.break
// CHECK:         dycl.return %[[R]] : tensor<4xf32>
// CHECK-LABEL: func.func @inner_break
// CHECK-NEXT:    arith.constant 0 : i64
// CHECK-NEXT:    arith.constant 1 : i64
// CHECK-NEXT:    arith.constant 0 : i64
// CHECK-NEXT:    dycl.while
// CHECK:         dycl.break
// CHECK-NOT:     dycl.for
// CHECK:         dycl.return
func.func @breaks(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c2 = arith.constant 2 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c0 to %c2 step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    dycl.if %c {
      dycl.break %h : tensor<4xf32>
    } else {
      dycl.yield
    }
    dycl.yield %h : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}
func.func @inner_break(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  dycl.for %i = %c0 to %c1 step %c1 {
    %w = dycl.while (%h = %x) -> (tensor<4xf32>) max_iterations 4 cond {
      dycl.condition %c
    } do {
    ^bb0(%b: tensor<4xf32>):
      dycl.break %b : tensor<4xf32>
    }
    dycl.yield
  }
  dycl.return %x : tensor<4xf32>
}

// Bounds that are not constants, and a zero step, leave the loop rolled.
// CHECK-LABEL: func.func @not_constant
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i64)
// CHECK:         %[[A:.*]] = dycl.for %{{.*}} = %{{.*}} to %[[N]] step
// CHECK:         %[[B:.*]] = dycl.for %{{.*}} = %{{.*}} to %{{.*}} step %[[S:.*]] iter_args(%{{.*}} = %[[A]])
// CHECK:         dycl.return %[[B]] : tensor<4xf32>
func.func @not_constant(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c4 = arith.constant 4 : i64
  %a = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %y = dycl.call_module "blocks"(%h) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %y : tensor<4xf32>
  }
  %b = dycl.for %i = %c0 to %c4 step %c0 iter_args(%h = %a) -> (tensor<4xf32>) {
    %y = dycl.call_module "blocks"(%h) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %y : tensor<4xf32>
  }
  dycl.return %b : tensor<4xf32>
}
