// RUN: dycl-opt %s -p constant-propagation | filecheck %s

// A tensor's dtype is known from its type, and `torch.finfo(dtype).min` (how
// attention-mask helpers write "minus infinity") folds to a number, so neither a
// dtype nor a finfo object has to cross into a sub-DNN.

// CHECK-LABEL: func.func @forward
// CHECK-NOT:     "builtins.getattr"
// CHECK-NOT:     "torch.finfo"
// CHECK:         %[[MIN:.*]] = arith.constant -3.4028234663852886e+38 : f64
// CHECK:         dycl.call_function "_operator.mul"(%x, %[[MIN]])
func.func @forward(%x: tensor<1x4xf32>) -> !dycl.any {
  %a = dycl.constant "dtype" : !dycl.pyobj
  %dt = dycl.call_function "builtins.getattr"(%x, %a) : (tensor<1x4xf32>, !dycl.pyobj) -> !dycl.pyobj
  %fi = dycl.call_function "torch.finfo"(%dt) : (!dycl.pyobj) -> !dycl.pyobj
  %m = dycl.constant "min" : !dycl.pyobj
  %min = dycl.call_function "builtins.getattr"(%fi, %m) : (!dycl.pyobj, !dycl.pyobj) -> !dycl.any
  %y = dycl.call_function "_operator.mul"(%x, %min) : (tensor<1x4xf32>, !dycl.any) -> !dycl.any
  dycl.return %y : !dycl.any
}
