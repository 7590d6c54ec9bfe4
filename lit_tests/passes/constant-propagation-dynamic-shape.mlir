// RUN: dycl-opt %s -p constant-propagation | filecheck %s

// Shape queries on a tensor with a `?` dimension: what reads only static
// dimensions (or the rank) folds; what reads a `?` one stays a run-time query
// (xDSL stores `?` as INT64_MIN, which must never become a constant).

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

// The whole shape is not static, but indexing it at a static dimension is.
// CHECK-LABEL: func.func @dynamic_whole_shape
// CHECK-SAME:    (%[[X:.*]]: tensor<?x3xf32>)
// CHECK-DAG:     %[[SZ:.*]] = dycl.call_method "size"(%[[X]]) : (tensor<?x3xf32>) -> !dycl.pyobj
// CHECK-DAG:     %[[SH:.*]] = dycl.call_function "builtins.getattr"(%[[X]], %{{.*}})
// CHECK-DAG:     %[[G0:.*]] = dycl.get_item %[[SH]][0 : i64] : !dycl.pyobj -> i64
// CHECK-DAG:     %[[G1:.*]] = arith.constant 3 : i64
// CHECK-DAG:     %[[GM1:.*]] = arith.constant 3 : i64
// CHECK-DAG:     %[[ND:.*]] = arith.constant 2 : i64
// CHECK:         dycl.return %[[SZ]], %[[SH]], %[[G0]], %[[G1]], %[[GM1]], %[[ND]] : !dycl.pyobj, !dycl.pyobj, i64, i64, i64, i64
func.func @dynamic_whole_shape(%x: tensor<?x3xf32>) -> (!dycl.pyobj, !dycl.pyobj, i64, i64, i64, i64) {
  %sz = dycl.call_method "size"(%x) : (tensor<?x3xf32>) -> !dycl.pyobj
  %shape = dycl.constant "shape" : !dycl.pyobj
  %sh = dycl.call_function "builtins.getattr"(%x, %shape) : (tensor<?x3xf32>, !dycl.pyobj) -> !dycl.pyobj
  %g0 = dycl.get_item %sh[0] : !dycl.pyobj -> i64
  %g1 = dycl.get_item %sh[1] : !dycl.pyobj -> i64
  %gm1 = dycl.get_item %sz[-1] : !dycl.pyobj -> i64
  %ndim = dycl.constant "ndim" : !dycl.pyobj
  %nd = dycl.call_function "builtins.getattr"(%x, %ndim) : (tensor<?x3xf32>, !dycl.pyobj) -> i64
  dycl.return %sz, %sh, %g0, %g1, %gm1, %nd : !dycl.pyobj, !dycl.pyobj, i64, i64, i64, i64
}
