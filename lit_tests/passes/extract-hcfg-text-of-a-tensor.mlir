// RUN: dycl-opt %s -p extract-hcfg | filecheck %s

// The text of a tensor (`f"{loss:.3f}"`, `str(t)`) is a Python string made from the
// data: the host formats it after the sub-DNN that computes the tensor, so no
// tensor region yields a Python object; the text of constants stays free.
// CHECK-LABEL: func.func @forward
// CHECK:         %[[S:.*]] = dycl.tensor_region -> (tensor<f32>) {
// CHECK:           dycl.call_method "sum"
// CHECK:         }
// CHECK-NEXT:    %[[T:.*]] = dycl.call_function "builtins.format"(%[[S]], %spec) : (tensor<f32>, !dycl.pyobj) -> !dycl.pyobj
// CHECK-NEXT:    %[[R:.*]] = dycl.call_function "builtins.repr"(%[[S]]) : (tensor<f32>) -> !dycl.pyobj
// CHECK-NEXT:    %{{.*}} = dycl.call_function "_operator.add"(%[[T]], %[[R]]) : (!dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
// CHECK-NOT:     -> (!dycl.pyobj
func.func @forward(%q: tensor<4xf32>) -> !dycl.pyobj {
  %spec = dycl.constant ".3f" : !dycl.pyobj
  %p = dycl.call_function "_operator.mul"(%q, %q) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = dycl.call_method "sum"(%p) : (tensor<4xf32>) -> tensor<f32>
  %t = dycl.call_function "builtins.format"(%s, %spec) : (tensor<f32>, !dycl.pyobj) -> !dycl.pyobj
  %r = dycl.call_function "builtins.repr"(%s) : (tensor<f32>) -> !dycl.pyobj
  %j = dycl.call_function "_operator.add"(%t, %r) : (!dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
  dycl.return %j : !dycl.pyobj
}
