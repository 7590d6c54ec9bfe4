// RUN: dycl import %S/inputs/nested_functions.py:make --input 1x4xf32 | filecheck %s
// RUN: dycl import %S/inputs/nested_functions.py:make --input 1x4xf32 | dycl-opt -p inline-calls | filecheck %s --check-prefix=INLINED

// A nested function or lambda is a private func.func of its parameters and of the
// free names it reads (`scale` is an argument; `self.fc` a module it calls), one per
// compile-time specialisation (`k=2.0`, `k=3.0`). inline-calls inlines them.

// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// CHECK:         %scale = dycl.call_method "mean"(%x)
// CHECK-NEXT:    %[[M:.*]] = func.call @Net.forward.mix(%x, %scale) : (tensor<1x4xf32>, !dycl.any) -> !dycl.any
// CHECK-NEXT:    func.call @Net.forward.lambda(%[[M]])
// CHECK-NEXT:    func.call @Net.forward.mix_2(%x, %scale)
// CHECK:       func.func private @Net.forward.mix(%0: tensor<1x4xf32>, %1: !dycl.any) -> !dycl.any
// CHECK-NEXT:    dycl.call_module "fc"(%0)
// CHECK-NEXT:    arith.constant 2.000000e+00 : f64
// CHECK:         dycl.call_function "_operator.add"(%{{.*}}, %1)
// CHECK:       func.func private @Net.forward.lambda(
// CHECK:       func.func private @Net.forward.mix_2(
// CHECK:         arith.constant 3.000000e+00 : f64

// INLINED-LABEL: func.func @forward
// INLINED-NOT:     func.call
// INLINED:         dycl.call_module "fc"(%x)
// INLINED:         torch.tanh
// INLINED:         torch.relu
// INLINED:         dycl.call_module "fc"(%x)
// INLINED-NOT:   func.func private
