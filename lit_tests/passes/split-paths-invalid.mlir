// RUN: not dycl-opt %s -p split-paths 2>&1 | filecheck %s

// After this branch the loop body goes on to the next iteration: there is no
// end of a path to copy the code up to.
// CHECK: split-paths-invalid.mlir:[[# @LINE + 7]]:5: error: cannot split the paths at this branch
// CHECK-NOT: Traceback
func.func @forward(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %c = dycl.to_bool %i : i64
    %g = dycl.if %c -> (tensor<4xf32>) {
      %y = dycl.call_function "torch.relu"(%h) : (tensor<4xf32>) -> tensor<4xf32>
      dycl.yield %y : tensor<4xf32>
    } else {
      dycl.yield %h : tensor<4xf32>
    } {dycl.split_paths}
    dycl.yield %g : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}
