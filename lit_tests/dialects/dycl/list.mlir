// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// Lists the host holds at run time: dycl.make_list, dycl.list_append,
// dycl.list_get and dycl.list_len on `!dycl.list<T>` (T is `!dycl.any` while
// unknown, as for `[]`).

// CHECK-LABEL: func.func @lists
// CHECK-SAME:    (%[[A:.*]]: i64, %[[T:.*]]: tensor<1x4xf32>)
// CHECK:         %[[E:.*]] = dycl.make_list() : () -> !dycl.list<!dycl.any>
// CHECK:         %[[L:.*]] = dycl.make_list(%[[A]]) : (i64) -> !dycl.list<i64>
// CHECK:         %[[M:.*]] = dycl.list_append %[[L]], %[[A]] : !dycl.list<i64>, i64 -> !dycl.list<i64>
// CHECK:         %[[TS:.*]] = dycl.list_append %[[E]], %[[T]] : !dycl.list<!dycl.any>, tensor<1x4xf32> -> !dycl.list<tensor<1x4xf32>>
// CHECK:         %[[V:.*]] = dycl.list_get %[[M]][%[[A]]] : !dycl.list<i64> -> i64
// CHECK:         %[[W:.*]] = dycl.list_get %[[TS]][%[[A]]] : !dycl.list<tensor<1x4xf32>> -> tensor<1x4xf32>
// CHECK:         %[[N:.*]] = dycl.list_len %[[M]] : !dycl.list<i64>
// CHECK:         dycl.return %[[N]] : i64
func.func @lists(%a: i64, %t: tensor<1x4xf32>) -> i64 {
  %e = dycl.make_list() : () -> !dycl.list<!dycl.any>
  %l = dycl.make_list(%a) : (i64) -> !dycl.list<i64>
  %m = dycl.list_append %l, %a : !dycl.list<i64>, i64 -> !dycl.list<i64>
  %ts = dycl.list_append %e, %t : !dycl.list<!dycl.any>, tensor<1x4xf32> -> !dycl.list<tensor<1x4xf32>>
  %v = dycl.list_get %m[%a] : !dycl.list<i64> -> i64
  %w = dycl.list_get %ts[%a] : !dycl.list<tensor<1x4xf32>> -> tensor<1x4xf32>
  %n = dycl.list_len %m : !dycl.list<i64>
  dycl.return %n : i64
}
