// RUN: dycl import %S/inputs/state.py:make --input 1x4xf32 | filecheck %s

// Module state written during forward (here by methods forward calls) is a
// variable inside the call: later reads use the value just stored (no read of
// the module), a branch joins it (`self.h` and `self.steps` are results of the
// dycl.if), and every write is also stored on the module with dycl.set_attr
// where eager assigns, on the path that assigns.

// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// CHECK:         %[[H0:.*]] = dycl.call_function "torch.zeros_like"(%x)
// CHECK-NEXT:    dycl.set_attr "" "h"(%[[H0]])
// CHECK:         dycl.set_attr "" "steps"(%{{.*}}) : i64
// CHECK:         %[[ADD:.*]] = dycl.call_function "_operator.add"(%{{.*}}, %[[H0]])
// CHECK-NEXT:    %[[H1:.*]] = dycl.call_function "torch.tanh"(%[[ADD]])
// CHECK-NEXT:    dycl.set_attr "" "h"(%[[H1]])
// CHECK:         %[[S:.*]] = dycl.call_method "sum"(%[[H1]])
// CHECK:         %[[H:.*]], %[[N:.*]] = dycl.if %{{.*}} -> (!dycl.any, i64) {
// CHECK:           %[[H2:.*]] = dycl.call_function "torch.tanh"
// CHECK-NEXT:      dycl.set_attr "" "h"(%[[H2]])
// CHECK:           dycl.set_attr "" "steps"
// CHECK:           dycl.yield %[[H2]], %{{.*}} : !dycl.any, i64
// CHECK-NEXT:    } else {
// CHECK-NOT:       dycl.set_attr
// CHECK:           dycl.yield %[[H1]], %{{.*}} : !dycl.any, i64
// CHECK:         dycl.make_tuple(%[[H]], %[[N]])
