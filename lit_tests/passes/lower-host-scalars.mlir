// RUN: dycl-opt %s -p lower-host-scalars | filecheck %s

// Host scalar calls become arith/math with Python's meaning; calls Python answers
// with an exception (a division by a run-time value) stay calls; sub-DNNs and
// tensor calls are not touched; constants and tuples nothing reads are removed.

// CHECK-LABEL: func.func @forward
// CHECK-NOT:     dycl.make_tuple
// CHECK:         %idx = dycl.item
// CHECK:         %[[EQ:.*]] = arith.cmpi eq, %idx, %{{.*}} : i64
// Python's `b < a` on bools compares 0 and 1: unsigned on i1.
// CHECK:         arith.cmpi ult, %{{.*}}, %{{.*}} : i1
// An int compared with a float compares as Python does, exactly: as floats where
// float(idx) differs from t (!= is true for NaN), else as ints (2**53 + 1 != 2.0**53;
// 2**63 is above every i64).
// CHECK:         %[[F:.*]] = arith.sitofp %idx : i64 to f64
// CHECK-NEXT:    %[[BYF:.*]] = arith.cmpf une, %[[F]], %t : f64
// CHECK-NEXT:    %[[SAME:.*]] = arith.cmpf oeq, %[[F]], %t : f64
// CHECK:         %[[BEYOND:.*]] = arith.cmpf oge, %t, %{{.*}} : f64
// CHECK:         %[[TI:.*]] = arith.fptosi %{{.*}} : f64 to i64
// CHECK:         %[[BYI:.*]] = arith.cmpi ne, %idx, %[[TI]] : i64
// CHECK-NEXT:    %[[EXACT:.*]] = arith.select %[[BEYOND]], %{{.*}}, %[[BYI]] : i1
// CHECK-NEXT:    arith.select %[[SAME]], %[[EXACT]], %[[BYF]] : i1
// ... and as floats where the float is a constant below 2**53 (no int rounds to it).
// CHECK:         %[[F2:.*]] = arith.sitofp %idx : i64 to f64
// CHECK-NEXT:    arith.cmpf olt, %[[F2]], %{{.*}} : f64
// `+` on a bool and an int is integer addition.
// CHECK:         %[[B:.*]] = arith.extui %flag : i1 to i64
// CHECK-NEXT:    arith.addi %[[B]], %idx : i64
// An int's true division by 4 is exact as floats; by 3 Python rounds once where
// float(idx) / 3.0 would round twice past 2**53: a call.
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:         dycl.call_function "_operator.truediv"(%idx, %c3) : (i64, i64) -> f64
// floor division and modulo by a non-zero constant floor, as Python's do.
// CHECK:         arith.floordivsi %idx, %{{.*}} : i64
// CHECK:         %[[R:.*]] = arith.remsi %idx, %{{.*}} : i64
// CHECK:         arith.select %{{.*}}, %{{.*}}, %[[R]] : i64
// ... but by a run-time value they may raise ZeroDivisionError: still calls.
// CHECK:         dycl.call_function "_operator.floordiv"(%idx, %idx)
// min(a, b) is `b if b < a else a`: the first operand wins ties and NaN.
// CHECK:         %[[LT:.*]] = arith.cmpf olt, %u, %t : f64
// CHECK-NEXT:    arith.select %[[LT]], %u, %t : f64
// not x tests against zero.
// CHECK:         %[[NZ:.*]] = arith.cmpi ne, %idx, %{{.*}} : i64
// CHECK:         arith.xori %[[NZ]], %{{.*}} : i1
// CHECK:         math.absf %t : f64
// CHECK:         arith.cmpf uno, %t, %t : f64
// Calls arith cannot express exactly stay: math.sqrt raises for negatives.
// CHECK:         dycl.call_function "math.sqrt"(%t)
// CHECK:         dycl.call_subgraph @sub_0
// CHECK-LABEL: func.func @sub_0
// CHECK:         dycl.call_function "_operator.add"
func.func @forward(%x: tensor<1x4xf32>) -> !dycl.pyobj {
  %i = dycl.call_method "argmax"(%x) : (tensor<1x4xf32>) -> tensor<i64>
  %idx = dycl.item %i : tensor<i64> -> i64
  %s = dycl.call_method "sum"(%x) : (tensor<1x4xf32>) -> tensor<f32>
  %t = dycl.item %s : tensor<f32> -> f64
  %flag = dycl.to_bool %i : tensor<i64>
  %c0 = arith.constant 0 : i64
  %c3 = arith.constant 3 : i64
  %dead = dycl.make_tuple(%c0, %idx) : (i64, i64) -> !dycl.pyobj
  %eq = dycl.call_function "_operator.eq"(%idx, %c0) : (i64, i64) -> i1
  %blt = dycl.call_function "_operator.lt"(%flag, %eq) : (i1, i1) -> i1
  %ne = dycl.call_function "_operator.ne"(%idx, %t) : (i64, f64) -> i1
  %half = arith.constant 2.5 : f64
  %lt = dycl.call_function "_operator.lt"(%idx, %half) : (i64, f64) -> i1
  %sum = dycl.call_function "_operator.add"(%flag, %idx) : (i1, i64) -> i64
  %c4 = arith.constant 4 : i64
  %q4 = dycl.call_function "_operator.truediv"(%idx, %c4) : (i64, i64) -> f64
  %q3 = dycl.call_function "_operator.truediv"(%idx, %c3) : (i64, i64) -> f64
  %fd = dycl.call_function "_operator.floordiv"(%idx, %c3) : (i64, i64) -> i64
  %md = dycl.call_function "_operator.mod"(%idx, %c3) : (i64, i64) -> i64
  %rt = dycl.call_function "_operator.floordiv"(%idx, %idx) : (i64, i64) -> i64
  %u = dycl.item %s : tensor<f32> -> f64
  %mn = dycl.call_function "builtins.min"(%t, %u) : (f64, f64) -> f64
  %nt = dycl.call_function "_operator.not_"(%idx) : (i64) -> i1
  %ab = dycl.call_function "builtins.abs"(%t) : (f64) -> f64
  %nan = dycl.call_function "math.isnan"(%t) : (f64) -> i1
  %sq = dycl.call_function "math.sqrt"(%t) : (f64) -> f64
  %y = dycl.call_subgraph @sub_0(%x, %idx) : (tensor<1x4xf32>, i64) -> tensor<1x4xf32>
  %r = dycl.make_tuple(%y, %blt, %ne, %lt, %sum, %q4, %q3, %fd, %md, %rt, %mn, %nt, %ab, %nan, %sq) : (tensor<1x4xf32>, i1, i1, i1, i64, f64, f64, i64, i64, i64, f64, i1, f64, i1, f64) -> !dycl.pyobj
  dycl.return %r : !dycl.pyobj
}
func.func @sub_0(%x: tensor<1x4xf32>, %k: i64) -> tensor<1x4xf32> attributes {dycl.subgraph} {
  %y = dycl.call_function "_operator.add"(%x, %k) : (tensor<1x4xf32>, i64) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
