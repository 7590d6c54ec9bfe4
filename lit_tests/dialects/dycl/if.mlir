// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.if: both branches yield, one branch returns early, no results, nesting.

// CHECK-LABEL: func.func @yield_both
// CHECK-SAME:    (%[[C:.*]]: i1, %[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<1x4xf32>)
// CHECK:         %[[R:.*]], %[[N:.*]] = dycl.if %[[C]] -> (tensor<1x4xf32>, i64) {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      dycl.yield %[[A]], %[[ONE]] : tensor<1x4xf32>, i64
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-NEXT:      dycl.yield %[[B]], %[[TWO]] : tensor<1x4xf32>, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x4xf32>
func.func @yield_both(%c: i1, %a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r:2 = dycl.if %c -> (tensor<1x4xf32>, i64) {
    %one = arith.constant 1 : i64
    dycl.yield %a, %one : tensor<1x4xf32>, i64
  } else {
    %two = arith.constant 2 : i64
    dycl.yield %b, %two : tensor<1x4xf32>, i64
  }
  dycl.return %r#0 : tensor<1x4xf32>
}

// The then branch leaves the function; the else branch yields a value of a
// type the result slot (!dycl.any) accepts.
// CHECK-LABEL: func.func @early_return
// CHECK-SAME:    (%[[C:.*]]: i1, %[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<1x4xf32>)
// CHECK:         %[[R:.*]] = dycl.if %[[C]] -> (!dycl.any) {
// CHECK-NEXT:      dycl.return %[[A]] : tensor<1x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %[[B]] : tensor<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : !dycl.any
func.func @early_return(%c: i1, %a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> !dycl.any {
  %r = dycl.if %c -> (!dycl.any) {
    dycl.return %a : tensor<1x4xf32>
  } else {
    dycl.yield %b : tensor<1x4xf32>
  }
  dycl.return %r : !dycl.any
}

// No results: no `->`, empty yields, and attributes after the else region.
// CHECK-LABEL: func.func @no_results
// CHECK-SAME:    (%[[C:.*]]: i1, %[[D:.*]]: i1, %[[A:.*]]: tensor<1x4xf32>)
// CHECK:         dycl.if %[[C]] {
// CHECK-NEXT:      dycl.if %[[D]] {
// CHECK-NEXT:        dycl.return %[[A]] : tensor<1x4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        dycl.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    } {hint = "cold"}
// CHECK-NEXT:    dycl.return %[[A]] : tensor<1x4xf32>
func.func @no_results(%c: i1, %d: i1, %a: tensor<1x4xf32>) -> tensor<1x4xf32> {
  dycl.if %c {
    dycl.if %d {
      dycl.return %a : tensor<1x4xf32>
    } else {
      dycl.yield
    }
    dycl.yield
  } else {
    dycl.yield
  } {hint = "cold"}
  dycl.return %a : tensor<1x4xf32>
}
