// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.make_tuple (tuples and lists) and dycl.get_item.
// get_item prints its index with its type (`[0 : i64]`); `[0]` parses too.

// CHECK-LABEL: func.func @tuples
// CHECK-SAME:    (%[[A:.*]]: tensor<1x8xf32>, %[[B:.*]]: tensor<1x8xf32>, %[[N:.*]]: i64)
// CHECK:         %[[T:.*]] = dycl.make_tuple(%[[A]], %[[B]]) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tuple<tensor<1x8xf32>, tensor<1x8xf32>>
// CHECK:         %[[H:.*]] = dycl.get_item %[[T]][0 : i64] : tuple<tensor<1x8xf32>, tensor<1x8xf32>> -> tensor<1x8xf32>
// CHECK:         %[[C:.*]] = dycl.get_item %[[T]][1 : i64] : tuple<tensor<1x8xf32>, tensor<1x8xf32>> -> !dycl.any
// CHECK:         %[[NEST:.*]] = dycl.make_tuple(%[[T]], %[[A]]) : (tuple<tensor<1x8xf32>, tensor<1x8xf32>>, tensor<1x8xf32>) -> tuple<tuple<tensor<1x8xf32>, tensor<1x8xf32>>, tensor<1x8xf32>>
// CHECK:         %[[INNER:.*]] = dycl.get_item %[[NEST]][0 : i64] : tuple<tuple<tensor<1x8xf32>, tensor<1x8xf32>>, tensor<1x8xf32>> -> tuple<tensor<1x8xf32>, tensor<1x8xf32>>
// CHECK:         dycl.return %[[H]] : tensor<1x8xf32>
func.func @tuples(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>, %n: i64) -> tensor<1x8xf32> {
  %t = dycl.make_tuple(%a, %b) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tuple<tensor<1x8xf32>, tensor<1x8xf32>>
  %h = dycl.get_item %t[0] : tuple<tensor<1x8xf32>, tensor<1x8xf32>> -> tensor<1x8xf32>
  %c = dycl.get_item %t[1] : tuple<tensor<1x8xf32>, tensor<1x8xf32>> -> !dycl.any
  %nest = dycl.make_tuple(%t, %a) : (tuple<tensor<1x8xf32>, tensor<1x8xf32>>, tensor<1x8xf32>) -> tuple<tuple<tensor<1x8xf32>, tensor<1x8xf32>>, tensor<1x8xf32>>
  %inner = dycl.get_item %nest[0] : tuple<tuple<tensor<1x8xf32>, tensor<1x8xf32>>, tensor<1x8xf32>> -> tuple<tensor<1x8xf32>, tensor<1x8xf32>>
  dycl.return %h : tensor<1x8xf32>
}

// Lists, tuples with host values, and not-yet-inferred tuples are opaque.
// CHECK-LABEL: func.func @opaque
// CHECK-SAME:    (%[[A:.*]]: tensor<2xf32>, %[[N:.*]]: i64, %[[U:.*]]: !dycl.any)
// CHECK:         %[[L:.*]] = dycl.make_tuple(%[[A]], %[[A]]) {is_list} : (tensor<2xf32>, tensor<2xf32>) -> !dycl.pyobj
// CHECK:         %[[M:.*]] = dycl.make_tuple(%[[A]], %[[N]]) : (tensor<2xf32>, i64) -> !dycl.pyobj
// CHECK:         %[[E:.*]] = dycl.make_tuple() : () -> !dycl.pyobj
// CHECK:         %[[Y:.*]] = dycl.make_tuple(%[[U]], %[[A]]) : (!dycl.any, tensor<2xf32>) -> !dycl.any
// CHECK:         %[[I:.*]] = dycl.get_item %[[L]][1 : i64] : !dycl.pyobj -> tensor<2xf32>
// CHECK:         %[[J:.*]] = dycl.get_item %[[Y]][0 : i64] : !dycl.any -> !dycl.any
// CHECK:         dycl.return %[[L]] : !dycl.pyobj
func.func @opaque(%a: tensor<2xf32>, %n: i64, %u: !dycl.any) -> !dycl.pyobj {
  %l = dycl.make_tuple(%a, %a) {is_list} : (tensor<2xf32>, tensor<2xf32>) -> !dycl.pyobj
  %m = dycl.make_tuple(%a, %n) : (tensor<2xf32>, i64) -> !dycl.pyobj
  %e = dycl.make_tuple() : () -> !dycl.pyobj
  %y = dycl.make_tuple(%u, %a) : (!dycl.any, tensor<2xf32>) -> !dycl.any
  %i = dycl.get_item %l[1] : !dycl.pyobj -> tensor<2xf32>
  %j = dycl.get_item %y[0] : !dycl.any -> !dycl.any
  dycl.return %l : !dycl.pyobj
}
