// RUN: dycl-opt %s -p extract-hcfg | filecheck %s

// Maximal runs of tensor ops become dycl.tensor_region; to_bool, dycl.if and
// host arithmetic stay outside. A constant used inside a run moves above it.
// CHECK-LABEL: func.func @branchy
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16xf32>)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[H:.*]], %[[G:.*]] = dycl.tensor_region -> (tensor<1x16xf32>, tensor<i1>) {
// CHECK-NEXT:      %[[HI:.*]] = dycl.call_module "pre"(%[[X]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:      %[[M:.*]] = dycl.call_method "mean"(%[[HI]]) : (tensor<1x16xf32>) -> tensor<f32>
// CHECK-NEXT:      %[[GI:.*]] = dycl.call_function "_operator.gt"(%[[M]], %[[C0]]) : (tensor<f32>, i64) -> tensor<i1>
// CHECK-NEXT:      dycl.yield %[[HI]], %[[GI]] : tensor<1x16xf32>, tensor<i1>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[G]] : tensor<i1>
// CHECK-NEXT:    dycl.if %[[C]] {
// CHECK-NEXT:      %[[A:.*]] = dycl.tensor_region -> (tensor<1x16xf32>) {
// CHECK-NEXT:        %[[AI:.*]] = dycl.call_module "a"(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:        dycl.yield %[[AI]] : tensor<1x16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.return %[[A]] : tensor<1x16xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = dycl.tensor_region -> (tensor<1x16xf32>) {
// CHECK-NEXT:      %[[Y:.*]] = dycl.call_module "b"(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:      %[[RI:.*]] = dycl.call_function "torch.relu"(%[[Y]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:      dycl.yield %[[RI]] : tensor<1x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x16xf32>
func.func @branchy(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %h = dycl.call_module "pre"(%x) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %m = dycl.call_method "mean"(%h) : (tensor<1x16xf32>) -> tensor<f32>
  %c0 = arith.constant 0 : i64
  %g = dycl.call_function "_operator.gt"(%m, %c0) : (tensor<f32>, i64) -> tensor<i1>
  %c = dycl.to_bool %g : tensor<i1>
  dycl.if %c {
    %a = dycl.call_module "a"(%h) : (tensor<1x16xf32>) -> tensor<1x16xf32>
    dycl.return %a : tensor<1x16xf32>
  } else {
    dycl.yield
  }
  %y = dycl.call_module "b"(%h) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %r = dycl.call_function "torch.relu"(%y) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  dycl.return %r : tensor<1x16xf32>
}

// Loop bodies and while conditions get their own regions; dycl.item splits a run.
// CHECK-LABEL: func.func @loops
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i64)
// CHECK:         %[[R:.*]] = dycl.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[H:.*]] = %[[X]]) -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[Y:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:        %[[YI:.*]] = dycl.call_module "blk"(%[[H]])
// CHECK-NEXT:        dycl.yield %[[YI]] : tensor<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[W:.*]] = dycl.while (%[[A:.*]] = %[[R]]) -> (tensor<4xf32>) max_iterations 8 cond {
// CHECK-NEXT:      %[[S:.*]] = dycl.tensor_region -> (tensor<f32>) {
// CHECK-NEXT:        %[[SI:.*]] = dycl.call_method "sum"(%[[A]])
// CHECK-NEXT:        dycl.yield %[[SI]] : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[C:.*]] = dycl.to_bool %[[S]] : tensor<f32>
// CHECK-NEXT:      dycl.condition %[[C]]{{$}}
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%[[B:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[Z:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:        %[[ZI:.*]] = dycl.call_module "step"(%[[B]])
// CHECK-NEXT:        dycl.yield %[[ZI]] : tensor<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield %[[Z]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[K:.*]] = dycl.tensor_region -> (tensor<i64>) {
// CHECK-NEXT:      %[[KI:.*]] = dycl.call_method "argmax"(%[[W]])
// CHECK-NEXT:      dycl.yield %[[KI]] : tensor<i64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[V:.*]] = dycl.item %[[K]] : tensor<i64> -> i64
// CHECK-NEXT:    %[[U:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[UI:.*]] = dycl.call_method "mul"(%[[W]], %[[V]])
// CHECK-NEXT:      dycl.yield %[[UI]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[U]], %[[V]] : tensor<4xf32>, i64
func.func @loops(%x: tensor<4xf32>, %n: i64) -> (tensor<4xf32>, i64) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %y = dycl.call_module "blk"(%h) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %y : tensor<4xf32>
  }
  %w = dycl.while (%a = %r) -> (tensor<4xf32>) max_iterations 8 cond {
    %s = dycl.call_method "sum"(%a) : (tensor<4xf32>) -> tensor<f32>
    %c = dycl.to_bool %s : tensor<f32>
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<4xf32>):
    %z = dycl.call_module "step"(%b) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %z : tensor<4xf32>
  }
  %k = dycl.call_method "argmax"(%w) : (tensor<4xf32>) -> tensor<i64>
  %v = dycl.item %k : tensor<i64> -> i64
  %u = dycl.call_method "mul"(%w, %v) : (tensor<4xf32>, i64) -> tensor<4xf32>
  dycl.return %u, %v : tensor<4xf32>, i64
}

// Left alone: sub-DNNs (already outlined) and functions without tensor ops.
// CHECK-LABEL: func.func @sub_9
// CHECK-NOT:     dycl.tensor_region
// CHECK:         dycl.call_module "b"
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @host_only
// CHECK-NOT:     dycl.tensor_region
// CHECK:         dycl.call_function "_operator.add"
// CHECK-NEXT:    dycl.return
func.func @sub_9(%x: tensor<1x16xf32>) -> tensor<1x16xf32> attributes {dycl.subgraph} {
  %y = dycl.call_module "b"(%x) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  func.return %y : tensor<1x16xf32>
}
func.func @host_only(%n: i64) -> i64 {
  %c1 = arith.constant 1 : i64
  %a = dycl.call_function "_operator.add"(%n, %c1) : (i64, i64) -> i64
  dycl.return %a : i64
}
