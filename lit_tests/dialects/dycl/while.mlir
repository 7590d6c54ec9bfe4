// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.while with dycl.condition: one and two carried values, !dycl.any slots, break.

// CHECK-LABEL: func.func @one_value
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK:         %[[R:.*]] = dycl.while (%[[H:.*]] = %[[X]]) -> (tensor<1x4xf32>) max_iterations 16 cond {
// CHECK-NEXT:      %[[M:.*]] = dycl.call_method "sum"(%[[H]]) : (tensor<1x4xf32>) -> tensor<f32>
// CHECK-NEXT:      %[[C:.*]] = dycl.to_bool %[[M]] : tensor<f32>
// CHECK-NEXT:      dycl.condition %[[C]]{{$}}
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%[[B:.*]]: tensor<1x4xf32>):
// CHECK-NEXT:      %[[N:.*]] = dycl.call_module "step"(%[[B]]) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:      dycl.yield %[[N]] : tensor<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x4xf32>
func.func @one_value(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = dycl.while (%h = %x) -> (tensor<1x4xf32>) max_iterations 16 cond {
    %m = dycl.call_method "sum"(%h) : (tensor<1x4xf32>) -> tensor<f32>
    %c = dycl.to_bool %m : tensor<f32>
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<1x4xf32>):
    %n = dycl.call_module "step"(%b) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %n : tensor<1x4xf32>
  }
  dycl.return %r : tensor<1x4xf32>
}

// Two carried values, a !dycl.any slot initialised from a typed value, a
// break out of the body, and attributes after the body.
// CHECK-LABEL: func.func @two_values
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>, %[[N:.*]]: i64)
// CHECK:         %[[R:.*]], %[[K:.*]] = dycl.while (%[[H:.*]] = %[[X]], %[[I:.*]] = %[[N]]) -> (!dycl.any, i64) max_iterations 1 cond {
// CHECK-NEXT:      %[[C:.*]] = dycl.to_bool %[[I]] : i64
// CHECK-NEXT:      dycl.condition %[[C]]{{$}}
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%[[BH:.*]]: !dycl.any, %[[BI:.*]]: i64):
// CHECK-NEXT:      %[[D:.*]] = dycl.to_bool %[[BH]] : !dycl.any
// CHECK-NEXT:      dycl.if %[[D]] {
// CHECK-NEXT:        dycl.break %[[BH]], %[[BI]] : !dycl.any, i64
// CHECK-NEXT:      } else {
// CHECK-NEXT:        dycl.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield %[[BH]], %[[BI]] : !dycl.any, i64
// CHECK-NEXT:    } {note = "bounded"}
// CHECK-NEXT:    dycl.return %[[R]] : !dycl.any
func.func @two_values(%x: tensor<1x4xf32>, %n: i64) -> !dycl.any {
  %r, %k = dycl.while (%h = %x, %i = %n) -> (!dycl.any, i64) max_iterations 1 cond {
    %c = dycl.to_bool %i : i64
    dycl.condition %c
  } do {
  ^bb0(%bh: !dycl.any, %bi: i64):
    %d = dycl.to_bool %bh : !dycl.any
    dycl.if %d {
      dycl.break %bh, %bi : !dycl.any, i64
    } else {
      dycl.yield
    }
    dycl.yield %bh, %bi : !dycl.any, i64
  } {note = "bounded"}
  dycl.return %r : !dycl.any
}

// Without max_iterations the loop has no guard: it runs as long as eager's would.
// CHECK-LABEL: func.func @unbounded
// CHECK:         dycl.while (%{{.*}} = %{{.*}}) -> (tensor<2xf32>) cond {
func.func @unbounded(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = dycl.while (%h = %x) -> (tensor<2xf32>) cond {
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<2xf32>):
    dycl.yield %b : tensor<2xf32>
  }
  dycl.return %r : tensor<2xf32>
}
