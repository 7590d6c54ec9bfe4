// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// examples/branchy.py: pre = Linear(16, 16), a = Sequential(Linear, ReLU,
// Linear), b = Linear(16, 16). Every !dycl.any gets a static type by running
// the ops on fake tensors; function result types follow.

// This is the frontend's IR for Branchy.forward.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16xf32>) -> tensor<1x16xf32> {
// CHECK-NEXT:    %[[H:.*]] = dycl.call_module "pre"(%[[X]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    %[[M:.*]] = dycl.call_method "mean"(%[[H]]) : (tensor<1x16xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[G:.*]] = dycl.call_function "_operator.gt"(%[[M]], %[[Z]]) : (tensor<f32>, i64) -> tensor<i1>
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[G]] : tensor<i1>
// CHECK-NEXT:    dycl.if %[[C]] {
// CHECK-NEXT:      %[[A0:.*]] = dycl.call_module "a.0"(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:      %[[A1:.*]] = dycl.call_module "a.1"(%[[A0]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:      %[[A2:.*]] = dycl.call_module "a.2"(%[[A1]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:      dycl.return %[[A2]] : tensor<1x16xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Y:.*]] = dycl.call_module "b"(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    %[[R:.*]] = dycl.call_function "torch.relu"(%[[Y]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x16xf32>
func.func @forward(%x: tensor<1x16xf32>) -> !dycl.any {
  %h = dycl.call_module "pre"(%x) : (tensor<1x16xf32>) -> !dycl.any
  %0 = dycl.call_method "mean"(%h) : (!dycl.any) -> !dycl.any
  %1 = arith.constant 0 : i64
  %2 = dycl.call_function "_operator.gt"(%0, %1) : (!dycl.any, i64) -> !dycl.any
  %3 = dycl.to_bool %2 : !dycl.any
  dycl.if %3 {
    %4 = dycl.call_module "a.0"(%h) : (!dycl.any) -> !dycl.any
    %5 = dycl.call_module "a.1"(%4) : (!dycl.any) -> !dycl.any
    %6 = dycl.call_module "a.2"(%5) : (!dycl.any) -> !dycl.any
    dycl.return %6 : !dycl.any
  } else {
    dycl.yield
  }
  %y = dycl.call_module "b"(%h) : (!dycl.any) -> !dycl.any
  %7 = dycl.call_function "torch.relu"(%y) : (!dycl.any) -> !dycl.any
  dycl.return %7 : !dycl.any
}

// Parameters, tuples, item, loop-carried values, if results and host scalars.
// CHECK-LABEL: func.func @misc
// CHECK-SAME:    (%[[X:.*]]: tensor<2x16xf32>, %[[N:.*]]: i64) -> (tuple<tensor<2x16xf32>, tensor<16x16xf32>>, tensor<16x16xf32>, i64, tensor<2x16xf32>) {
// CHECK-NEXT:    %[[W:.*]] = dycl.param "b.weight" : tensor<16x16xf32>
// CHECK-NEXT:    %[[B:.*]] = dycl.param "b.bias" : tensor<16xf32>
// CHECK-NEXT:    %[[T:.*]] = dycl.make_tuple(%[[X]], %[[W]]) : (tensor<2x16xf32>, tensor<16x16xf32>) -> tuple<tensor<2x16xf32>, tensor<16x16xf32>>
// CHECK-NEXT:    %[[G:.*]] = dycl.get_item %[[T]][1 : i64] : tuple<tensor<2x16xf32>, tensor<16x16xf32>> -> tensor<16x16xf32>
// CHECK-NEXT:    %[[S:.*]] = dycl.call_method "sum"(%[[G]]) : (tensor<16x16xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[V:.*]] = dycl.item %[[S]] : tensor<f32> -> f64
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[R:.*]] = dycl.for %{{.*}} = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[H:.*]] = %[[X]]) -> (tensor<2x16xf32>) {
// CHECK-NEXT:      %[[Z:.*]] = dycl.call_module "a.1"(%[[H]]) : (tensor<2x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT:      dycl.yield %[[Z]] : tensor<2x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[V]] : f64
// CHECK-NEXT:    %[[K:.*]] = dycl.if %[[C]] -> (tensor<16x16xf32>) {
// CHECK-NEXT:      %[[WT:.*]] = dycl.call_method "t"(%[[W]]) : (tensor<16x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:      dycl.yield %[[WT]] : tensor<16x16xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %[[W]] : tensor<16x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[NP:.*]] = dycl.call_function "_operator.add"(%[[N]], %[[C1]]) : (i64, i64) -> i64
// CHECK-NEXT:    dycl.return %[[T]], %[[K]], %[[NP]], %[[R]] : tuple<tensor<2x16xf32>, tensor<16x16xf32>>, tensor<16x16xf32>, i64, tensor<2x16xf32>
func.func @misc(%x: tensor<2x16xf32>, %n: i64) -> (!dycl.any, !dycl.any, !dycl.any, !dycl.any) {
  %w = dycl.param "b.weight" : !dycl.any
  %bias = dycl.param "b.bias" : !dycl.any
  %t = dycl.make_tuple(%x, %w) : (tensor<2x16xf32>, !dycl.any) -> !dycl.any
  %g = dycl.get_item %t[1] : !dycl.any -> !dycl.any
  %s = dycl.call_method "sum"(%g) : (!dycl.any) -> !dycl.any
  %v = dycl.item %s : !dycl.any -> !dycl.any
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : i64
  %r = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (!dycl.any) {
    %z = dycl.call_module "a.1"(%h) : (!dycl.any) -> !dycl.any
    dycl.yield %z : !dycl.any
  }
  %c = dycl.to_bool %v : !dycl.any
  %k = dycl.if %c -> (!dycl.any) {
    %m = dycl.call_method "t"(%w) : (!dycl.any) -> !dycl.any
    dycl.yield %m : !dycl.any
  } else {
    dycl.yield %w : !dycl.any
  }
  %np = dycl.call_function "_operator.add"(%n, %c1) : (i64, i64) -> !dycl.any
  dycl.return %t, %k, %np, %r : !dycl.any, !dycl.any, !dycl.any, !dycl.any
}

// Paths that return different types: the result becomes !dycl.pyobj.
// CHECK-LABEL: func.func @per_path
// CHECK-SAME:    (%[[C:.*]]: i1, %[[X:.*]]: tensor<1x16xf32>) -> !dycl.pyobj {
// CHECK:           dycl.return %{{.*}} : tensor<16x16xf32>
// CHECK:         dycl.return %[[X]] : tensor<1x16xf32>
func.func @per_path(%c: i1, %x: tensor<1x16xf32>) -> !dycl.any {
  dycl.if %c {
    %w = dycl.param "pre.weight" : !dycl.any
    dycl.return %w : !dycl.any
  } else {
    dycl.yield
  }
  dycl.return %x : tensor<1x16xf32>
}
