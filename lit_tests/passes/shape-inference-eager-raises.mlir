// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `x.view(n, -1)` after a transpose taken on one path: for these shapes and strides
// eager raises whatever the values (not contiguous). On that path (paths split at
// the join) the view is eager's exception, with its own message, and nothing after
// it runs; the other path views as before.
// CHECK-LABEL: func.func @forward
// CHECK:         dycl.if %{{.*}} {
// CHECK:           %{{.*}} = dycl.call_method "transpose"
// CHECK:           %[[MSG:.*]] = dycl.constant "view size is not compatible with input tensor's size and stride
// CHECK-NEXT:      dycl.raise "builtins.RuntimeError"(%[[MSG]]) : !dycl.pyobj
// CHECK-NEXT:      dycl.return
// CHECK:         } else {
// CHECK:           %{{.*}} = dycl.call_method "view"(%x, %{{.*}}, %{{.*}}) : (tensor<2x4x5xf32>, i64, i64) -> tensor<2x20xf32>
func.func @forward(%x: tensor<2x4x5xf32>) -> !dycl.any {
  %0 = dycl.call_method "mean"(%x) : (tensor<2x4x5xf32>) -> !dycl.any
  %1 = arith.constant 3.000000e-01 : f64
  %2 = dycl.call_function "_operator.gt"(%0, %1) : (!dycl.any, f64) -> !dycl.any
  %3 = dycl.to_bool %2 : !dycl.any
  %x_1 = dycl.if %3 -> (!dycl.any) {
    %4 = arith.constant 1 : i64
    %5 = arith.constant 2 : i64
    %x_2 = dycl.call_method "transpose"(%x, %4, %5) : (tensor<2x4x5xf32>, i64, i64) -> !dycl.any
    dycl.yield %x_2 : !dycl.any
  } else {
    dycl.yield %x : tensor<2x4x5xf32>
  }
  %6 = arith.constant 0 : i64
  %7 = dycl.call_method "size"(%x_1, %6) : (!dycl.any, i64) -> !dycl.any
  %8 = arith.constant -1 : i64
  %9 = dycl.call_method "view"(%x_1, %7, %8) : (!dycl.any, !dycl.any, i64) -> !dycl.any
  dycl.return %9 : !dycl.any
}
