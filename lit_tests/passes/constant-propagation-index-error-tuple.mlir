// RUN: not dycl-opt %s -p constant-propagation 2>&1 | filecheck %s

// Indexing a constant tuple past its end is a located error.
// CHECK: constant-propagation-index-error-tuple.mlir:[[# @LINE + 5]]:3: error: index 3 is out of range for a tuple of 2 elements
// CHECK-NOT: Traceback
func.func @out_of_range() -> (i64, i64) {
  %t = dycl.constant [1 : i64, 2 : i64] : !dycl.pyobj
  %g1 = dycl.get_item %t[-2] : !dycl.pyobj -> i64
  %g = dycl.get_item %t[3] : !dycl.pyobj -> i64
  dycl.return %g1, %g : i64, i64
}
