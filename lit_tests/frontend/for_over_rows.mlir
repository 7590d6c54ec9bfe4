// RUN: dycl import %S/inputs/rows.py:make --input 3x4xf32 | filecheck %s

// `for c in t` over a tensor whose row count the frontend does not know (a call's
// result; here `unique()`, whose count the data decides) is a loop over
// range(len(t)) taking t[i]: unroll-loops unrolls it where shape inference finds
// the count, else it is a host loop.

// CHECK-LABEL: func.func @forward(%x: tensor<3x4xf32>)
// CHECK:         %[[U:.*]] = dycl.call_method "unique"
// CHECK-NEXT:    %[[N:.*]] = dycl.call_function "builtins.len"(%[[U]])
// CHECK-NEXT:    %[[LB:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[UB:.*]] = dycl.item %[[N]] : !dycl.any -> i64
// CHECK:         dycl.for %[[I:.*]] = %[[LB]] to %[[UB]] step %{{.*}} iter_args(
// CHECK-NEXT:      %c = dycl.call_function "dycl.tensor_ops.row"(%[[U]], %[[I]])
// CHECK-NEXT:      dycl.call_function "_operator.add"(%{{.*}}, %c)
