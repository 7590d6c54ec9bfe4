// RUN: dycl-opt %s -p 'check-index-bounds{model="%examples/captioner.py:make_model"}' | filecheck %s

// A loss's class targets: 0 <= t < 5, or the ignore_index (-100 unless given), which
// passes to the loss as it is; others are wrapped into range for the kernel (TVM read
// past the input: -3e-41) and the host raises eager's IndexError, with the first
// target out of range in eager's message.
// CHECK:         %[[SKIP:.*]] = arith.constant -100 : i64
// CHECK-NEXT:    %[[IGN:.*]] = dycl.call_function "_operator.eq"(%t, %[[SKIP]])
// CHECK:         %[[KEPT:.*]] = dycl.call_function "torch.where"(%[[IGN]], %t, %{{.*}})
// CHECK-NEXT:    %ce = dycl.call_function "torch.nn.functional.cross_entropy"(%x, %[[KEPT]])
// CHECK:         dycl.raise "builtins.IndexError"(%{{.*}}) {message = "Target {} is out of bounds."} : i64
// CHECK:         %[[SKIP2:.*]] = arith.constant 255 : i64
// CHECK:         %nll = dycl.call_function "torch.nn.functional.nll_loss"
func.func @forward(%x: tensor<2x5xf32>, %t: tensor<2xi64>) -> tensor<f32> {
  %ce = dycl.call_function "torch.nn.functional.cross_entropy"(%x, %t) : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
  %ignore = arith.constant 255 : i64
  %nll = dycl.call_function "torch.nn.functional.nll_loss"(%x, %t, %ignore) {kwargs = ["ignore_index"]} : (tensor<2x5xf32>, tensor<2xi64>, i64) -> tensor<f32>
  func.return %ce : tensor<f32>
}
