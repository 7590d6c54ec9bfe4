// RUN: not dycl-opt %s -p eliminate-early-exits 2>&1 | filecheck %s

// A return inside a loop cannot be yielded by the loop: the frontend turns it
// into a break and a return after the loop; given as is, it is a located error.
// CHECK: eliminate-early-exits-invalid.mlir:[[# @LINE + 2]]:1: error: cannot move the early returns of @loop_exit to its end: it returns early from inside 'dycl.for'
// CHECK-NOT: Traceback
func.func @loop_exit(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  dycl.for %i = %c0 to %n step %c1 {
    %c = dycl.to_bool %i : i64
    dycl.if %c {
      dycl.return %x : tensor<4xf32>
    } else {
      dycl.yield
    }
    dycl.yield
  }
  dycl.return %x : tensor<4xf32>
}
