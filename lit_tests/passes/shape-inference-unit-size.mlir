// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `x[mask].squeeze(0)`: eager drops the first dimension when the mask keeps one
// row. Typed with a size symbol it stays `?x8` (torch assumes the symbol is not 1),
// and `dim()` would fold to 2 on every path. The path splits on `size(0) == 1`:
// one copy squeezes a static 1x8 (dim() is 1), the other any other size; the
// squeeze is marked so the second copy is not split again. An op that relates two
// dynamic sizes (`sel - sel2`, broadcast) is checked at run time instead: no split
// (in the copy for one row, it broadcasts the static 1, as eager does).

// CHECK-LABEL: func.func @forward
// CHECK:         %sel = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape} : (tensor<6x8xf32>, tensor<6xi1>) -> tensor<?x8xf32>
// CHECK:         %[[SIZE:.*]] = dycl.call_method "size"(%sel, %{{.*}}) : (tensor<?x8xf32>, i64) -> i64
// CHECK:         %[[EQ:.*]] = dycl.call_function "_operator.eq"(%[[SIZE]], %{{.*}}) : (i64, i64) -> i1
// CHECK:         %[[COND:.*]] = dycl.to_bool %[[EQ]] : i1
// CHECK:         dycl.if %[[COND]] {
// CHECK:           %[[ONE:.*]] = dycl.call_method "narrow"(%sel, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x8xf32>, i64, i64, i64) -> tensor<1x8xf32>
// CHECK:           %y = dycl.call_method "squeeze"(%[[ONE]], %z) {dycl.unit_size_checked = ["0:0"]} : (tensor<1x8xf32>, i64) -> tensor<8xf32>
// CHECK:           %d = dycl.call_method "dim"(%y) : (tensor<8xf32>) -> i64
// CHECK:           dycl.call_function "_operator.sub"(%[[ONE]], %sel2) : (tensor<1x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK:           dycl.return
// CHECK:         } else {
// CHECK-NEXT:      dycl.yield
// CHECK:         %y_1 = dycl.call_method "squeeze"(%sel, %z) {dycl.unit_size_checked = ["0:0"]} : (tensor<?x8xf32>, i64) -> tensor<?x8xf32>
// CHECK:         %d_1 = dycl.call_method "dim"(%y_1) : (tensor<?x8xf32>) -> i64
// CHECK-NOT:     dycl.unit_size_checked
// CHECK:         dycl.call_function "_operator.sub"(%sel, %sel2) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK:         dycl.return
func.func @forward(%x: tensor<6x8xf32>) -> !dycl.any {
  %m1 = arith.constant -1 : i64
  %z = arith.constant 0 : i64
  %rsum = dycl.call_method "sum"(%x, %m1) : (tensor<6x8xf32>, i64) -> !dycl.any
  %mask = dycl.call_function "_operator.gt"(%rsum, %z) : (!dycl.any, i64) -> !dycl.any
  %mask2 = dycl.call_function "_operator.lt"(%rsum, %z) : (!dycl.any, i64) -> !dycl.any
  %sel = dycl.call_function "_operator.getitem"(%x, %mask) : (tensor<6x8xf32>, !dycl.any) -> !dycl.any
  %sel2 = dycl.call_function "_operator.getitem"(%x, %mask2) : (tensor<6x8xf32>, !dycl.any) -> !dycl.any
  %y = dycl.call_method "squeeze"(%sel, %z) : (!dycl.any, i64) -> !dycl.any
  %d = dycl.call_method "dim"(%y) : (!dycl.any) -> !dycl.any
  %diff = dycl.call_function "_operator.sub"(%sel, %sel2) : (!dycl.any, !dycl.any) -> !dycl.any
  %t = dycl.make_tuple(%y, %d, %diff) : (!dycl.any, !dycl.any, !dycl.any) -> !dycl.any
  dycl.return %t : !dycl.any
}
