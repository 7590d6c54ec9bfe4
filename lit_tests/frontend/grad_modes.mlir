// RUN: dycl import %S/inputs/grad_modes.py:make --input 1x4xf32 | filecheck %s

// Grad-mode blocks and decorators are transparent, but the calls inside keep the
// switches made around them (outermost first), for what `t.requires_grad` and
// `torch.is_grad_enabled()` give; calls outside them run in the caller's mode. A helper
// (`@torch.no_grad() def features`) is a function of its own, its calls in its mode.

// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// CHECK:         %a = dycl.call_function "_operator.add"(%x, %{{.*}}) {dycl.grad_mode = "inference,off"}
// CHECK-NEXT:    %b = dycl.call_module "fc"(%x) {dycl.grad_mode = "off,on"}
// CHECK-NEXT:    %c = func.call @GradModes.features(%x)
// CHECK:         dycl.call_function "builtins.getattr"(%b, %{{.*}}) :
// CHECK-NOT:     dycl.grad_mode
// CHECK-LABEL: func.func private @GradModes.features
// CHECK-NEXT:    dycl.call_module "fc"(%0) {dycl.grad_mode = "off"}
