// RUN: not dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: dycl-opt %s -p 'unroll-loops,shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// A loop-carried value whose type changes per iteration cannot be typed while
// the loop is rolled; the diagnostic points at the loop and suggests unrolling.
// ERR: shape-inference-loop.mlir:[[# @LINE + 13]]:3: error: 'r' changes from a 16xf32 tensor to a 1x16xf32 tensor across the loop's iterations
// ERR-NEXT: note: run unroll-loops first so each iteration gets its own types

// Unrolled, each copy gets its own type.
// CHECK-LABEL: func.func @grow
// CHECK-SAME:    (%[[X:.*]]: tensor<16xf32>) -> tensor<1x1x16xf32> {
// CHECK:         %[[A:.*]] = dycl.call_method "unsqueeze"(%[[X]], %{{.*}}) : (tensor<16xf32>, i64) -> tensor<1x16xf32>
// CHECK:         %[[B:.*]] = dycl.call_method "unsqueeze"(%[[A]], %{{.*}}) : (tensor<1x16xf32>, i64) -> tensor<1x1x16xf32>
// CHECK:         dycl.return %[[B]] : tensor<1x1x16xf32>
func.func @grow(%x: tensor<16xf32>) -> !dycl.any {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %r = dycl.for %i = %c0 to %c2 step %c1 iter_args(%h = %x) -> (!dycl.any) {
    %u = dycl.call_method "unsqueeze"(%h, %c0) : (!dycl.any, i64) -> !dycl.any
    dycl.yield %u : !dycl.any
  }
  dycl.return %r : !dycl.any
}
