// RUN: not dycl-opt %s -p peel-loops 2>&1 | filecheck %s

// A loop whose body may `break` leaves from its first iteration too: peeling it
// would need the code after the loop in the copy; an error at the loop.
// CHECK: peel-loops-invalid.mlir:[[# @LINE + 5]]:3: error: cannot peel this loop: its body has a `break`
// CHECK-NOT: Traceback
func.func @forward(%x: tensor<4xf32>) -> !dycl.any {
  %zero = arith.constant 0 : i64
  %half = arith.constant 5.000000e-01 : f64
  %h, %cost = dycl.while (%h0 = %x, %c0 = %zero) -> (!dycl.any, !dycl.any) cond {
    %t = arith.constant true
    dycl.condition %t
  } do {
  ^bb0(%h1: !dycl.any, %c1: !dycl.any):
    %h2 = dycl.call_function "_operator.mul"(%h1, %half) : (!dycl.any, f64) -> !dycl.any
    %m = dycl.call_method "mean"(%h2) : (!dycl.any) -> !dycl.any
    %c2 = dycl.call_function "_operator.add"(%c1, %m) : (!dycl.any, !dycl.any) -> !dycl.any
    %s = dycl.to_bool %m : !dycl.any
    dycl.if %s {
      dycl.break %h2, %c2 : !dycl.any, !dycl.any
    } else {
      dycl.yield
    }
    dycl.yield %h2, %c2 : !dycl.any, !dycl.any
  } {dycl.peel}
  dycl.return %cost : !dycl.any
}
