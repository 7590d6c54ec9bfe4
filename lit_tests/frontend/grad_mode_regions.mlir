// RUN: dycl import %S/inputs/grad_mode_regions.py:make --input 1x4xf32 | filecheck %s

// Python run as a fallback region keeps the grad-mode switches around it: the
// region carries those of its function's decorators and the blocks it is in, and
// its code makes again those of the `with` blocks inside it, which lowering made
// transparent (else its tensors would record autograd's graph where eager's do not).

// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>)
// CHECK:         dycl.py_region(%h) {dycl.grad_mode = "off", code = "{{.*}}match int(h.sum() > 0):\0A        case 1:\0A            with __import__('dycl.grad_modes', fromlist=['switched']).switched('on'):\0A                h = self.fc(h)\0A        case _:\0A            h = -h\0A
