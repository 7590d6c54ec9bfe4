// RUN: dycl import %S/inputs/exits.py:make --input 1x4xf32 | filecheck %s

// Python in, IR out. `assert` and an uncaught `raise` are host checks
// (dycl.raise with eager's arguments); a custom exception raised two calls deep
// and caught by forward is an early exit: its handler's `return e.logits,
// e.layer` is emitted where the raise was, with the payload's values.

// `assert x.dim() == 2` holds for the compiled shape (x.dim() of a static shape is a
// Python int): decided at compile time, no host check.
// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// CHECK-NOT:     dycl.raise "builtins.AssertionError"
// CHECK:           %[[MSG:.*]] = dycl.constant "input too large"
// CHECK-NEXT:      %[[LIMIT:.*]] = arith.constant 100 : i64
// CHECK-NEXT:      dycl.raise "builtins.ValueError"(%[[MSG]], %[[LIMIT]]) : !dycl.pyobj, i64
// CHECK:         %[[H0:.*]] = dycl.call_module "encoder.layers.0"(%x)
// CHECK:         dycl.if
// CHECK-NEXT:      %[[I0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[R0:.*]] = dycl.make_tuple(%[[H0]], %[[I0]])
// CHECK-NEXT:      dycl.return %[[R0]]
// CHECK:         %[[H1:.*]] = dycl.call_module "encoder.layers.1"(%[[H0]])
// CHECK:         dycl.if
// CHECK-NEXT:      %[[I1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[R1:.*]] = dycl.make_tuple(%[[H1]], %[[I1]])
// CHECK-NEXT:      dycl.return %[[R1]]
// CHECK:         %[[NONE:.*]] = arith.constant -1 : i64
// CHECK-NEXT:    %[[R:.*]] = dycl.make_tuple(%[[H1]], %[[NONE]])
// CHECK-NEXT:    dycl.return %[[R]]
// CHECK-NOT:     dycl.py_region
