// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s
// RUN: not dycl-opt %S/inputs/signature-needs-value.mlir -p 'shape-inference{model="%examples/branchy.py:make_model"}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not dycl-opt %S/inputs/signature-mismatch.mlir -p 'shape-inference{model="%examples/branchy.py:make_model"}' 2>&1 | filecheck %s --check-prefix=BAD

// The function's input signature names its dynamic dimensions: every `b` is one
// size (so x + y needs no guard), sizes read from it are run-time scalars that
// the tensor code can use (`view(n, -1)`), and the range bounds the symbol.
// No op here makes a size from data, so none is marked.

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    attributes {dycl.signature = "b x 8 x f32, b x 8 x f32; b=1..64"}
// CHECK:         %s = dycl.call_function "_operator.add"(%x, %y) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    %n = dycl.call_method "size"(%s, %z) : (tensor<?x8xf32>, i64) -> i64
// CHECK-NEXT:    %v = dycl.call_method "view"(%s, %n, %m1) : (tensor<?x8xf32>, i64, i64) -> tensor<?x8xf32>
// CHECK-NOT:     dycl.data_dependent_shape
func.func @forward(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> !dycl.any attributes {dycl.signature = "b x 8 x f32, b x 8 x f32; b=1..64"} {
  %z = arith.constant 0 : i64
  %m1 = arith.constant -1 : i64
  %s = dycl.call_function "_operator.add"(%x, %y) : (tensor<?x8xf32>, tensor<?x8xf32>) -> !dycl.any
  %n = dycl.call_method "size"(%s, %z) : (!dycl.any, i64) -> !dycl.any
  %v = dycl.call_method "view"(%s, %n, %m1) : (!dycl.any, !dycl.any, i64) -> !dycl.any
  dycl.return %v : !dycl.any
}

// ERR: signature-needs-value.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the input dimensions declared symbolic (b) cannot stay symbolic here
// ERR-NEXT: note: compile without them

// BAD: error: dycl.signature: input 0 is b x 8 x f32, the argument is tensor<4x8xf32>
