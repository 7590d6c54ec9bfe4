// RUN: dycl import %S/inputs/loop_returns.py:make --input 3x4xf32 | filecheck %s

// A `return` inside a loop over a run-time range is a `break` that stores the
// value in a slot (a 1-tuple) and sets a flag; after the loop, `if flag: return
// slot[0]`. The slot enters the loop as None marked dycl.unset: nothing reads it
// before a return sets it, so shape-inference types it from what is stored.

// CHECK-LABEL: func.func @forward(%x: tensor<3x4xf32>)
// CHECK:         %[[SLOT:.*]] = dycl.constant none {dycl.unset} : !dycl.pyobj
// CHECK-NEXT:    %[[NO:.*]] = arith.constant false
// CHECK:         %[[RET:.*]], %[[DONE:.*]] = dycl.for %j = {{.*}} iter_args(%{{.*}} = %[[SLOT]], %{{.*}} = %[[NO]])
// CHECK:           %[[BOX:.*]] = dycl.make_tuple(%{{.*}}) : (!dycl.any) -> !dycl.any
// CHECK-NEXT:      %[[YES:.*]] = arith.constant true
// CHECK-NEXT:      dycl.break %[[BOX]], %[[YES]] : !dycl.any, i1
// CHECK:         %[[C:.*]] = dycl.to_bool %[[DONE]]
// CHECK-NEXT:    dycl.if %[[C]] -> (!dycl.any) {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %{{.*}} = dycl.call_function "_operator.getitem"(%[[RET]], %[[ZERO]])
