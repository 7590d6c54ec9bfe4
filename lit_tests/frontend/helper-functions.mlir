// RUN: dycl import %S/inputs/helpers.py:make --input 1x4xf32 | filecheck %s
// RUN: dycl import %S/inputs/helpers.py:make --input 1x4xf32 | dycl-opt -p inline-calls | filecheck %s --check-prefix=INLINED

// A helper whose body translates on its own (a submodule's forward, a method) is a
// private func.func, one per compile-time specialisation (`scale=0.5`, `k=2`/`k=3`),
// called with func.call; what it returns that is known at compile time (`k + 1`)
// stays a constant in the caller. A helper that changes module state (`_count`) is
// translated where it is called. inline-calls then inlines the functions.

// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// CHECK:         %[[A:.*]] = func.call @a.forward(%x) : (tensor<1x4xf32>) -> !dycl.any
// CHECK:         dycl.if
// CHECK-NEXT:      func.call @b.forward(%[[A]])
// CHECK:         %y = func.call @Net._head(%{{.*}})
// CHECK-NEXT:    %z = func.call @Net._head_2(%{{.*}})
// CHECK-NEXT:    %steps = dycl.get_attr "" "steps"
// CHECK:         dycl.set_attr "" "steps"
// CHECK:         arith.constant 3 : i64
// CHECK:         arith.constant 4 : i64
// CHECK:       func.func private @a.forward(%0: tensor<1x4xf32>) -> !dycl.any
// CHECK-NEXT:    dycl.call_module "a.fc"(%0)
// CHECK:         arith.constant 1.000000e+00 : f64
// CHECK:         func.return
// CHECK:       func.func private @b.forward(%0: !dycl.any) -> !dycl.any
// CHECK:         arith.constant 5.000000e-01 : f64
// CHECK:       func.func private @Net._head(
// CHECK:         arith.constant 2 : i64
// CHECK:       func.func private @Net._head_2(
// CHECK:         arith.constant 3 : i64
// CHECK-NOT:   func.func

// INLINED-LABEL: func.func @forward
// INLINED-NOT:     func.call
// INLINED:         dycl.call_module "a.fc"(%x)
// INLINED:         dycl.call_module "b.fc"
// INLINED-NOT:   func.func private
