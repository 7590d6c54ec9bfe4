// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s
// RUN: not dycl-opt %S/inputs/list-edited-on-one-path.mlir -p 'shape-inference{model="%examples/branchy.py:make_model"}' 2>&1 | filecheck %s --check-prefix=PATH

// A list of sizes built and edited in forward (`s = list(idx.shape); s[1:] = [1] * k`)
// given to a tensor op: the op takes its value as literals (exporters trace no
// Python list arguments).
// CHECK-LABEL: func.func @forward
// CHECK:         %[[S:.*]] = dycl.call_function "dycl.tensor_ops.setitem"(%{{.*}}) : (!dycl.pyobj, !dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
// CHECK:         %[[A:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[B:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[C:.*]] = arith.constant 4 : i64
// CHECK-NEXT:    %[[AB:.*]] = dycl.make_tuple(%[[A]], %[[B]], %[[C]]) {is_list} : (i64, i64, i64) -> !dycl.pyobj
// CHECK-NEXT:    %{{.*}} = dycl.call_method "view"(%x, %[[AB]]) : (tensor<2x4xf32>, !dycl.pyobj) -> tensor<2x1x4xf32>

// A list edited on one path only holds, after the join, sizes only the run knows
// (this pass once typed the reshape by the path that edited it, on both paths).
// PATH: list-edited-on-one-path.mlir:18:3: error: shape inference failed
func.func @forward(%x: tensor<2x4xf32>) -> !dycl.any {
  %0 = dycl.constant "shape" : !dycl.pyobj
  %1 = dycl.call_function "builtins.getattr"(%x, %0) : (tensor<2x4xf32>, !dycl.pyobj) -> !dycl.any
  %s = dycl.call_function "builtins.list"(%1) : (!dycl.any) -> !dycl.any
  %2 = arith.constant 1 : i64
  %3 = dycl.constant none : !dycl.pyobj
  %4 = dycl.constant none : !dycl.pyobj
  %5 = dycl.call_function "builtins.slice"(%2, %3, %4) : (i64, !dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
  %6 = arith.constant 1 : i64
  %9 = arith.constant 4 : i64
  %7 = dycl.make_tuple(%6, %9) {is_list} : (i64, i64) -> !dycl.pyobj
  %8 = dycl.call_function "dycl.tensor_ops.setitem"(%s, %5, %7) : (!dycl.any, !dycl.pyobj, !dycl.pyobj) -> !dycl.any
  %11 = dycl.call_method "view"(%x, %8) : (tensor<2x4xf32>, !dycl.any) -> !dycl.any
  dycl.return %11 : !dycl.any
}
