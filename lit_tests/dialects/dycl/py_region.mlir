// RUN: dycl-opt %s | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// A fallback region: the user's Python, run by the host on the real model.

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK-NEXT:    %[[Y:.*]] = dycl.py_region(%[[X]]) {code = "def __dycl_region(__dycl_root, x):\0A    print(x)\0A    y = x\0A    return (y,)\0A", globals = "builtins", loc = "m.py:3:5", construct = "print", reason = "a call with side effects"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    dycl.py_region() {{.*}}tail{{.*}} : () -> !dycl.pyobj
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %y = dycl.py_region(%x) {code = "def __dycl_region(__dycl_root, x):\0A    print(x)\0A    y = x\0A    return (y,)\0A", globals = "builtins", loc = "m.py:3:5", construct = "print", reason = "a call with side effects"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %r = dycl.py_region() {code = "def __dycl_region(__dycl_root):\0A    return None\0A", globals = "builtins", loc = "m.py:4:5", construct = "return", reason = "r", tail} : () -> !dycl.pyobj
  dycl.return %y : tensor<1x4xf32>
}
