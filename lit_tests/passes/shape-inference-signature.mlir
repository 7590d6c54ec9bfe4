// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s
// RUN: not dycl-opt %S/inputs/signature-needs-value.mlir -p 'shape-inference{model="%examples/branchy.py:make_model"}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not dycl-opt %S/inputs/signature-mismatch.mlir -p 'shape-inference{model="%examples/branchy.py:make_model"}' 2>&1 | filecheck %s --check-prefix=BAD

// The function's input signature names its dynamic dimensions, and the types
// carry the names (`tensor<?x8xf32, ["b", ""]>`): every `b` is one size (so x + y
// needs no guard), what is computed from them carries the expression (`2*b` for
// the two concatenated), sizes read from them are run-time scalars the tensor
// code can use (`view(n, -1)`), and the range bounds the symbol. No op here makes
// a size from data, so none is marked.

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    -> (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["2*b", ""]>)
// CHECK-SAME:    attributes {dycl.signature = "b x 8 x f32, b x 8 x f32; b=1..64"}
// CHECK:         %s = dycl.call_function "_operator.add"(%x, %y) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
// CHECK-NEXT:    %n = dycl.call_method "size"(%s, %z) : (tensor<?x8xf32, ["b", ""]>, i64) -> i64
// CHECK-NEXT:    %v = dycl.call_method "view"(%s, %n, %m1) : (tensor<?x8xf32, ["b", ""]>, i64, i64) -> tensor<?x8xf32, ["b", ""]>
// CHECK:         %c = dycl.call_function "torch.cat"(%l) : ({{.*}}) -> tensor<?x8xf32, ["2*b", ""]>
// CHECK-NOT:     dycl.data_dependent_shape
func.func @forward(%x: tensor<?x8xf32, ["b", ""]>, %y: tensor<?x8xf32, ["b", ""]>) -> (!dycl.any, !dycl.any) attributes {dycl.signature = "b x 8 x f32, b x 8 x f32; b=1..64"} {
  %z = arith.constant 0 : i64
  %m1 = arith.constant -1 : i64
  %s = dycl.call_function "_operator.add"(%x, %y) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> !dycl.any
  %n = dycl.call_method "size"(%s, %z) : (!dycl.any, i64) -> !dycl.any
  %v = dycl.call_method "view"(%s, %n, %m1) : (!dycl.any, !dycl.any, i64) -> !dycl.any
  %l = dycl.make_tuple(%x, %y) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tuple<tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>>
  %c = dycl.call_function "torch.cat"(%l) : (tuple<tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>>) -> !dycl.any
  dycl.return %v, %c : !dycl.any, !dycl.any
}

// ERR: signature-needs-value.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the input dimensions declared symbolic (b) cannot stay symbolic here
// ERR-NEXT: note: compile without them

// BAD: error: dycl.signature: input 0 is b x 8 x f32, the argument is tensor<4x8xf32>
