// RUN: dycl-opt %s -p extract-hcfg | filecheck %s

// `q.device` read once, used by tensor work on both sides of a host read: each
// region reads it itself (a device object cannot be handed from one sub-DNN to
// the next), so no tensor region yields a Python object.
// CHECK-LABEL: func.func @forward
// CHECK:         %[[S:.*]] = dycl.tensor_region -> (tensor<f32>) {
// CHECK-NEXT:      %[[D1:.*]] = dycl.call_function "builtins.getattr"(%q, %device) : (tensor<4xf32>, !dycl.pyobj) -> !dycl.pyobj
// CHECK-NEXT:      %[[O1:.*]] = dycl.call_function "torch.ones"(%c4, %[[D1]]) {kwargs = ["device"]} : (i64, !dycl.pyobj) -> tensor<4xf32>
// CHECK:         }
// CHECK:         %n = dycl.item %[[S]] : tensor<f32> -> i64
// CHECK-NEXT:    %[[R:.*]] = dycl.tensor_region -> (tensor<?xf32>) {
// CHECK-NEXT:      %[[D2:.*]] = dycl.call_function "builtins.getattr"(%q, %device) : (tensor<4xf32>, !dycl.pyobj) -> !dycl.pyobj
// CHECK-NEXT:      %[[O2:.*]] = dycl.call_function "torch.ones"(%n, %[[D2]]) {kwargs = ["device"]} : (i64, !dycl.pyobj) -> tensor<?xf32>
// CHECK:         }
// CHECK-NOT:     -> (!dycl.pyobj
func.func @forward(%q: tensor<4xf32>) -> tensor<?xf32> {
  %c4 = arith.constant 4 : i64
  %device = dycl.constant "device" : !dycl.pyobj
  %dev = dycl.call_function "builtins.getattr"(%q, %device) : (tensor<4xf32>, !dycl.pyobj) -> !dycl.pyobj
  %o = dycl.call_function "torch.ones"(%c4, %dev) {kwargs = ["device"]} : (i64, !dycl.pyobj) -> tensor<4xf32>
  %p = dycl.call_function "_operator.mul"(%o, %q) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = dycl.call_method "sum"(%p) : (tensor<4xf32>) -> tensor<f32>
  %n = dycl.item %s : tensor<f32> -> i64
  %r = dycl.call_function "torch.ones"(%n, %dev) {kwargs = ["device"]} : (i64, !dycl.pyobj) -> tensor<?xf32>
  dycl.return %r : tensor<?xf32>
}
