// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `y, k = (y, 1) if c else (None, 0)`, then `if y is None: return -x`, `y * k`:
// the two Python tuples have the same IR type (!dycl.pyobj) but parts of different
// kinds, so each path gets its own copy of the code after the join. (The first
// path's tuple stood for both: `y` was typed as a tensor, `y is None` then folded
// to false, and the None path returned `None * 0`'s error.) Where a branch decided
// by its path returns, the code after it is dead on that path and goes.
// CHECK-LABEL: func.func @forward
// CHECK:         dycl.if %2 {
// CHECK:           %v = dycl.get_item %3[0 : i64] : !dycl.pyobj -> tensor<1x4xf32>
// CHECK:           %[[M:.*]] = dycl.call_function "_operator.mul"(%v, %k) : (tensor<1x4xf32>, i64) -> tensor<1x4xf32>
// CHECK-NEXT:      dycl.return %[[M]] : tensor<1x4xf32>
// CHECK:         %v_1 = dycl.get_item %{{.*}}[0 : i64] : !dycl.pyobj -> !dycl.pyobj
// CHECK-NOT:     _operator.mul
// CHECK:         %[[N:.*]] = dycl.call_function "_operator.neg"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    dycl.return %[[N]] : tensor<1x4xf32>
func.func @forward(%x: tensor<1x4xf32>) -> !dycl.any {
  %y = dycl.call_function "torch.tanh"(%x) : (tensor<1x4xf32>) -> !dycl.any
  %0 = dycl.call_method "sum"(%y) : (!dycl.any) -> !dycl.any
  %zero = arith.constant 0 : i64
  %1 = dycl.call_function "_operator.gt"(%0, %zero) : (!dycl.any, i64) -> !dycl.any
  %2 = dycl.to_bool %1 : !dycl.any
  %pair = dycl.if %2 -> (!dycl.any) {
    %one = arith.constant 1 : i64
    %3 = dycl.make_tuple(%y, %one) : (!dycl.any, i64) -> !dycl.any
    dycl.yield %3 : !dycl.any
  } else {
    %none = dycl.constant none : !dycl.pyobj
    %4 = dycl.make_tuple(%none, %zero) : (!dycl.pyobj, i64) -> !dycl.pyobj
    dycl.yield %4 : !dycl.pyobj
  }
  %v = dycl.get_item %pair[0 : i64] : !dycl.any -> !dycl.any
  %k = dycl.get_item %pair[1 : i64] : !dycl.any -> !dycl.any
  %none2 = dycl.constant none : !dycl.pyobj
  %5 = dycl.call_function "_operator.is_"(%v, %none2) : (!dycl.any, !dycl.pyobj) -> !dycl.any
  %6 = dycl.to_bool %5 : !dycl.any
  dycl.if %6 {
    %7 = dycl.call_function "_operator.neg"(%x) : (tensor<1x4xf32>) -> !dycl.any
    dycl.return %7 : !dycl.any
  } else {
    dycl.yield
  }
  %8 = dycl.call_function "_operator.mul"(%v, %k) : (!dycl.any, !dycl.any) -> !dycl.any
  dycl.return %8 : !dycl.any
}
