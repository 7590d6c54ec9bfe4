// RUN: not dycl-opt %s -p verify-host-contract 2>&1 | filecheck %s
// RUN: dycl-opt %s -p "verify-host-contract{allow-python=true}" | filecheck %s --check-prefix=PY

// Python the host would run is listed, each with its location and why.
// CHECK:      error: the C++ host cannot run this program (3 operation(s) outside the host contract):
// CHECK-NEXT:   verify-host-contract-python.mlir:[[# @LINE + 12]]:{{.*}}: Python call 'math.sqrt'
// CHECK-NEXT:   model.py:12:9: a fallback region (print: a call with side effects) at model.py:12:9, Python code
// CHECK-NEXT:   verify-host-contract-python.mlir:[[# @LINE + 14]]:{{.*}}: a module-state store (Python objects)
// CHECK-NEXT:   note: compile with the Python host

// The Python host takes it.
// PY-LABEL: func.func @forward
// PY:         dycl.py_region
// PY:         dycl.set_attr
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %p = dycl.call_subgraph @sub_0(%x) : (tensor<1x4xf32>) -> tensor<i64>
  %k = dycl.item %p : tensor<i64> -> f64
  %s = dycl.call_function "math.sqrt"(%k) : (f64) -> f64
  %y = dycl.py_region(%x) {code = "def __dycl_region(__dycl_root, x):\0A    print(x)\0A    return (x,)\0A",
                           globals = "model", loc = "model.py:12:9", construct = "print",
                           reason = "a call with side effects"} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("model.py":12:9)
  dycl.set_attr "" "steps"(%s) : f64
  dycl.return %y : tensor<1x4xf32>
}
func.func @sub_0(%x: tensor<1x4xf32>) -> tensor<i64> attributes {dycl.subgraph} {
  %i = dycl.call_method "argmax"(%x) : (tensor<1x4xf32>) -> tensor<i64>
  func.return %i : tensor<i64>
}

