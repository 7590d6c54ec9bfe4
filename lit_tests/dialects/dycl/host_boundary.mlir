// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// The host/device boundary: dycl.to_bool and dycl.item.

// CHECK-LABEL: func.func @to_bool
// CHECK-SAME:    (%[[T:.*]]: tensor<i1>, %[[U:.*]]: tensor<1x1xf32>, %[[N:.*]]: i64, %[[A:.*]]: !dycl.any, %[[P:.*]]: !dycl.pyobj)
// CHECK:         %[[C0:.*]] = dycl.to_bool %[[T]] : tensor<i1>
// CHECK:         %[[C1:.*]] = dycl.to_bool %[[U]] : tensor<1x1xf32>
// CHECK:         %[[C2:.*]] = dycl.to_bool %[[N]] : i64
// CHECK:         %[[C3:.*]] = dycl.to_bool %[[A]] : !dycl.any
// CHECK:         %[[C4:.*]] = dycl.to_bool %[[P]] : !dycl.pyobj
// CHECK:         dycl.return %[[C0]] : i1
func.func @to_bool(%t: tensor<i1>, %u: tensor<1x1xf32>, %n: i64, %a: !dycl.any, %p: !dycl.pyobj) -> i1 {
  %c0 = dycl.to_bool %t : tensor<i1>
  %c1 = dycl.to_bool %u : tensor<1x1xf32>
  %c2 = dycl.to_bool %n : i64
  %c3 = dycl.to_bool %a : !dycl.any
  %c4 = dycl.to_bool %p : !dycl.pyobj
  dycl.return %c0 : i1
}

// CHECK-LABEL: func.func @item
// CHECK-SAME:    (%[[T:.*]]: tensor<i64>, %[[F:.*]]: tensor<1xf32>, %[[N:.*]]: i64, %[[X:.*]]: f64, %[[A:.*]]: !dycl.any)
// CHECK:         %[[V:.*]] = dycl.item %[[T]] : tensor<i64> -> i64
// CHECK:         %[[W:.*]] = dycl.item %[[F]] : tensor<1xf32> -> f64
// CHECK:         %[[B:.*]] = dycl.item %[[T]] : tensor<i64> -> i1
// CHECK:         %[[I:.*]] = dycl.item %[[X]] : f64 -> i64
// CHECK:         %[[J:.*]] = dycl.item %[[N]] : i64 -> f64
// CHECK:         %[[K:.*]] = dycl.item %[[A]] : !dycl.any -> !dycl.any
// CHECK:         dycl.return %[[V]], %[[W]] : i64, f64
func.func @item(%t: tensor<i64>, %f: tensor<1xf32>, %n: i64, %x: f64, %a: !dycl.any) -> (i64, f64) {
  %v = dycl.item %t : tensor<i64> -> i64
  %w = dycl.item %f : tensor<1xf32> -> f64
  %b = dycl.item %t : tensor<i64> -> i1
  %i = dycl.item %x : f64 -> i64
  %j = dycl.item %n : i64 -> f64
  %k = dycl.item %a : !dycl.any -> !dycl.any
  dycl.return %v, %w : i64, f64
}

// A `?` dimension may be 1 at run time (where torch checks it), so tensors
// whose static dimensions are all 1 are accepted.
// CHECK-LABEL: func.func @dynamic_one_element
// CHECK-SAME:    (%[[D:.*]]: tensor<?xf32>, %[[E:.*]]: tensor<1x?xi64>, %[[U:.*]]: tensor<*xf32>)
// CHECK:         %[[C0:.*]] = dycl.to_bool %[[D]] : tensor<?xf32>
// CHECK:         %[[C1:.*]] = dycl.to_bool %[[E]] : tensor<1x?xi64>
// CHECK:         %[[V:.*]] = dycl.item %[[D]] : tensor<?xf32> -> f64
// CHECK:         %[[W:.*]] = dycl.item %[[E]] : tensor<1x?xi64> -> i64
// CHECK:         %[[X:.*]] = dycl.item %[[U]] : tensor<*xf32> -> f64
// CHECK:         dycl.return %[[C0]], %[[V]], %[[W]] : i1, f64, i64
func.func @dynamic_one_element(%d: tensor<?xf32>, %e: tensor<1x?xi64>, %u: tensor<*xf32>) -> (i1, f64, i64) {
  %c0 = dycl.to_bool %d : tensor<?xf32>
  %c1 = dycl.to_bool %e : tensor<1x?xi64>
  %v = dycl.item %d : tensor<?xf32> -> f64
  %w = dycl.item %e : tensor<1x?xi64> -> i64
  %x = dycl.item %u : tensor<*xf32> -> f64
  dycl.return %c0, %v, %w : i1, f64, i64
}
