// RUN: not dycl-opt %s -p constant-propagation 2>&1 | filecheck %s

// A dimension index known to be out of range is a located error, not a
// Python exception escaping the pass (item 3 of a pair: see -tuple.mlir).
// CHECK: constant-propagation-index-error.mlir:[[# @LINE + 6]]:3: error: dimension 5 is out of range for tensor<2x3xf32> (rank 2)
// CHECK-NOT: Traceback
func.func @out_of_range(%x: tensor<2x3xf32>) -> (i64, i64) {
  %c1 = arith.constant 1 : i64
  %c5 = arith.constant 5 : i64
  %ok = dycl.call_method "size"(%x, %c1) : (tensor<2x3xf32>, i64) -> i64
  %s = dycl.call_method "size"(%x, %c5) : (tensor<2x3xf32>, i64) -> i64
  dycl.return %ok, %s : i64, i64
}
