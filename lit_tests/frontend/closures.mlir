// RUN: dycl import %S/inputs/closures.py:make --input 1x4xf32 | filecheck %s --check-prefix=FUNC
// RUN: dycl import %S/inputs/closures.py:make --input 1x4xf32 | dycl-opt -p inline-calls | filecheck %s

// Python in, IR out: a lambda closing over a local, a dict comprehension over a
// ModuleDict's items inside `with torch.no_grad()`, and `sum` over the dict's
// values are all compile-time structure; only the tensor work is left. The lambda
// is one function (its free `scale` a constant of it), called for each head, and
// inline-calls inlines it.

// FUNC-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// FUNC:         func.call @Model.forward.lambda
// FUNC:         func.call @Model.forward.lambda
// FUNC:       func.func private @Model.forward.lambda(%0: !dycl.any)
// FUNC-NEXT:    dycl.call_function "torch.relu"(%0)
// FUNC-NEXT:    arith.constant 2.000000e+00 : f64

// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// CHECK-NEXT:    %[[A:.*]] = dycl.call_module "heads.a"(%x)
// CHECK-NEXT:    %[[RA:.*]] = dycl.call_function "torch.relu"(%[[A]])
// CHECK-NEXT:    %[[S1:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %[[MA:.*]] = dycl.call_function "_operator.mul"(%[[RA]], %[[S1]])
// CHECK-NEXT:    %[[B:.*]] = dycl.call_module "heads.b"(%x)
// CHECK-NEXT:    %[[RB:.*]] = dycl.call_function "torch.relu"(%[[B]])
// CHECK-NEXT:    %[[S2:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %[[MB:.*]] = dycl.call_function "_operator.mul"(%[[RB]], %[[S2]])
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[P:.*]] = dycl.call_function "_operator.add"(%[[ZERO]], %[[MA]])
// CHECK-NEXT:    %[[SUM:.*]] = dycl.call_function "_operator.add"(%[[P]], %[[MB]])
// CHECK-NEXT:    dycl.return %[[SUM]]
