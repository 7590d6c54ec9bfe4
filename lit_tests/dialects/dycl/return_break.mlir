// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.return (end of function and early) and dycl.break (innermost loop).

// CHECK-LABEL: func.func @no_values
// CHECK-NEXT:    dycl.return{{$}}
func.func @no_values() {
  dycl.return
}

// !dycl.pyobj and !dycl.any results accept values of any type, so the two
// paths may return different types.
// CHECK-LABEL: func.func @per_path_types
// CHECK-SAME:    (%[[C:.*]]: i1, %[[A:.*]]: tensor<1x4xf32>, %[[N:.*]]: i64)
// CHECK:         dycl.if %[[C]] {
// CHECK-NEXT:      dycl.return %[[A]], %[[A]] : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[N]], %[[A]] : i64, tensor<1x4xf32>
func.func @per_path_types(%c: i1, %a: tensor<1x4xf32>, %n: i64) -> (!dycl.pyobj, !dycl.any) {
  dycl.if %c {
    dycl.return %a, %a : tensor<1x4xf32>, tensor<1x4xf32>
  } else {
    dycl.yield
  }
  dycl.return %n, %a : i64, tensor<1x4xf32>
}

// A break leaves the innermost loop only (here the dycl.for, with no results),
// a return inside a loop leaves the whole function.
// CHECK-LABEL: func.func @nested_loops
// CHECK-SAME:    (%[[X:.*]]: tensor<2xf32>, %[[C:.*]]: i1, %[[N:.*]]: i64)
// CHECK:         %[[R:.*]] = dycl.while (%[[H:.*]] = %[[X]]) -> (tensor<2xf32>) max_iterations 8 cond {
// CHECK-NEXT:      dycl.condition %[[C]]{{$}}
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%[[B:.*]]: tensor<2xf32>):
// CHECK-NEXT:      dycl.for %[[I:.*]] = %[[N]] to %[[N]] step %[[N]] {
// CHECK-NEXT:        dycl.if %[[C]] {
// CHECK-NEXT:          dycl.break{{$}}
// CHECK-NEXT:        } else {
// CHECK-NEXT:          dycl.return %[[B]] : tensor<2xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        dycl.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.break %[[B]] : tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<2xf32>
func.func @nested_loops(%x: tensor<2xf32>, %c: i1, %n: i64) -> tensor<2xf32> {
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) max_iterations 8 cond {
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<2xf32>):
    dycl.for %i = %n to %n step %n {
      dycl.if %c {
        dycl.break
      } else {
        dycl.return %b : tensor<2xf32>
      }
      dycl.yield
    }
    dycl.break %b : tensor<2xf32>
  }
  dycl.return %r : tensor<2xf32>
}
