// RUN: dycl import %S/inputs/state_buffers.py:make --input 2x4xf32 | filecheck %s

// Buffers forward updates are module state, not constants of the sub-DNNs: each is
// read on the host where forward first reads it (a copy: values stay immutable),
// updated as a value, and stored in place (`{in_place}`: the module keeps its own
// tensor, as in eager). A pointer kept as a Python int is read as an i64 and
// indexes the buffer on the host's side of the call.

// CHECK-LABEL: func.func @forward(%x: tensor<2x4xf32>)
// CHECK-NOT:     dycl.param "count"
// CHECK:         %[[C:.*]] = dycl.get_attr "" "count" {copy} : tensor<f32>
// CHECK:         %[[C1:.*]] = dycl.call_function "dycl.tensor_ops.inplace_result"(%{{.*}}, %[[C]])
// CHECK-NEXT:    dycl.set_attr "" "count"(%[[C1]]) {in_place}
// CHECK:         %[[M:.*]] = dycl.get_attr "" "mean" {copy} : tensor<4xf32>
// CHECK:         dycl.call_method "mul"(%[[M]], %{{.*}})
// CHECK:         dycl.set_attr "" "mean"(%{{.*}}) {in_place}
// CHECK:         dycl.set_attr "" "mean"(%[[M2:.*]]) {in_place}
// CHECK:         %[[H:.*]] = dycl.get_attr "" "hist" {copy} : tensor<3xf32>
// CHECK-NEXT:    %[[P:.*]] = dycl.get_attr "" "ptr" : i64
// CHECK-NEXT:    %[[H1:.*]] = dycl.call_function "dycl.tensor_ops.setitem"(%[[H]], %[[P]], %{{.*}})
// CHECK-NEXT:    dycl.set_attr "" "hist"(%[[H1]]) {in_place}
// CHECK:         dycl.set_attr "" "ptr"(%{{.*}}) :
// CHECK-NOT:       in_place
// CHECK:         dycl.call_function "_operator.sub"(%h, %[[M2]])
