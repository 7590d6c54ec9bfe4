// RUN: not dycl-opt %s -p peel-loops 2>&1 | filecheck %s

// A loop bounded to one iteration has nothing left to run after its first: an
// error at the loop, not a loop bounded to zero.
// CHECK: peel-loops-invalid.mlir:[[# @LINE + 5]]:3: error: cannot peel this loop: its bound allows one iteration only
// CHECK-NOT: Traceback
func.func @forward(%x: tensor<4xf32>) -> !dycl.any {
  %zero = arith.constant 0 : i64
  %half = arith.constant 5.000000e-01 : f64
  %h, %cost = dycl.while (%h0 = %x, %c0 = %zero) -> (!dycl.any, !dycl.any) max_iterations 1 cond {
    %t = arith.constant true
    dycl.condition %t
  } do {
  ^bb0(%h1: !dycl.any, %c1: !dycl.any):
    %h2 = dycl.call_function "_operator.mul"(%h1, %half) : (!dycl.any, f64) -> !dycl.any
    %m = dycl.call_method "mean"(%h2) : (!dycl.any) -> !dycl.any
    %c2 = dycl.call_function "_operator.add"(%c1, %m) : (!dycl.any, !dycl.any) -> !dycl.any
    dycl.yield %h2, %c2 : !dycl.any, !dycl.any
  } {dycl.peel}
  dycl.return %cost : !dycl.any
}
