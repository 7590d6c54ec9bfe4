// RUN: dycl import %S/inputs/membership.py:make --input 4xf32 | filecheck %s

// `v not in (2, 3)` on a run-time number: not (v == 2 or v == 3).

// CHECK-LABEL: func.func @forward(%x: tensor<4xf32>)
// CHECK:         %[[V:.*]] = dycl.item
// CHECK:         %[[E2:.*]] = dycl.call_function "_operator.eq"(%[[V]], %{{.*}})
// CHECK:         %[[E3:.*]] = dycl.call_function "_operator.eq"(%[[V]], %{{.*}})
// CHECK:         %[[B2:.*]] = dycl.to_bool %[[E2]]
// CHECK-NEXT:    %[[B3:.*]] = dycl.to_bool %[[E3]]
// CHECK-NEXT:    %[[IN:.*]] = arith.ori %[[B2]], %[[B3]] : i1
// CHECK:         %[[NOT:.*]] = arith.xori %[[IN]], %{{.*}} : i1
// CHECK-NEXT:    dycl.if %[[NOT]]
