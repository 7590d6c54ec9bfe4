// RUN: dycl-opt %s -p constant-propagation | filecheck %s
// XFAIL: *
// BUG: FoldShapeQuery folds dimensions of dynamically shaped tensors as if they
// were static: `x.size(0)` on tensor<?x3xf32> becomes
// `arith.constant -9223372036854775808 : i64` (xDSL's DYNAMIC_INDEX), and
// `x.numel()` overflows i64 and aborts the pass. Only static dimensions (and
// `dim()`, the rank) may fold. Remove the XFAIL line once that is fixed.

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%[[X:.*]]: tensor<?x3xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[D0:.*]] = dycl.call_method "size"(%[[X]], %[[C0]]) : (tensor<?x3xf32>, i64) -> i64
// CHECK-DAG:     %[[D1:.*]] = arith.constant 3 : i64
// CHECK-DAG:     %[[N:.*]] = dycl.call_method "numel"(%[[X]]) : (tensor<?x3xf32>) -> i64
// CHECK-DAG:     %[[R:.*]] = arith.constant 2 : i64
// CHECK:         dycl.return %[[D0]], %[[D1]], %[[N]], %[[R]] : i64, i64, i64, i64
func.func @dynamic(%x: tensor<?x3xf32>) -> (i64, i64, i64, i64) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %d0 = dycl.call_method "size"(%x, %c0) : (tensor<?x3xf32>, i64) -> i64
  %d1 = dycl.call_method "size"(%x, %c1) : (tensor<?x3xf32>, i64) -> i64
  %n = dycl.call_method "numel"(%x) : (tensor<?x3xf32>) -> i64
  %r = dycl.call_method "dim"(%x) : (tensor<?x3xf32>) -> i64
  dycl.return %d0, %d1, %n, %r : i64, i64, i64, i64
}
