// RUN: dycl-opt %s -p outline-subgraphs | filecheck %s

// Each dycl.tensor_region becomes a func.func @sub_N marked dycl.subgraph, called
// with dycl.call_subgraph. Existing names are skipped (@sub_0 is taken here).

// The existing sub-DNN is left as it is.
// CHECK-LABEL: func.func @sub_0
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {dycl.subgraph} {
// CHECK-NEXT:    func.return %[[A]] : tensor<4xf32>
func.func @sub_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {dycl.subgraph} {
  func.return %a : tensor<4xf32>
}

// Region inputs become call operands; constants are copied into the sub-DNN
// and the host's now unused ones are removed.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK-NEXT:    %[[H:.*]], %[[G:.*]] = dycl.call_subgraph @sub_1(%[[X]]) : (tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<i1>)
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[G]] : tensor<i1>
// CHECK-NEXT:    dycl.if %[[C]] {
// CHECK-NEXT:      %[[A:.*]] = dycl.call_subgraph @sub_2(%[[H]]) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:      dycl.return %[[A]] : tensor<1x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = dycl.call_subgraph @sub_3(%[[H]]) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x4xf32>
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %c0 = arith.constant 0 : i64
  %h, %g = dycl.tensor_region -> (tensor<1x4xf32>, tensor<i1>) {
    %0 = dycl.call_module "pre"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %m = dycl.call_method "mean"(%0) : (tensor<1x4xf32>) -> tensor<f32>
    %1 = dycl.call_function "_operator.gt"(%m, %c0) : (tensor<f32>, i64) -> tensor<i1>
    dycl.yield %0, %1 : tensor<1x4xf32>, tensor<i1>
  }
  %c = dycl.to_bool %g : tensor<i1>
  dycl.if %c {
    %a = dycl.tensor_region -> (tensor<1x4xf32>) {
      %2 = dycl.call_module "a"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
      dycl.yield %2 : tensor<1x4xf32>
    }
    dycl.return %a : tensor<1x4xf32>
  } else {
    dycl.yield
  }
  %r = dycl.tensor_region -> (tensor<1x4xf32>) {
    %y = dycl.call_module "b"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %y : tensor<1x4xf32>
  }
  dycl.return %r : tensor<1x4xf32>
}

// A region in a loop body: the induction variable and carried value are
// inputs; the loop bounds stay on the host.
// CHECK-LABEL: func.func @loop
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i64)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[R:.*]] = dycl.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[H:.*]] = %[[X]]) -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[Y:.*]] = dycl.call_subgraph @sub_4(%[[H]], %[[I]]) : (tensor<4xf32>, i64) -> tensor<4xf32>
// CHECK-NEXT:      dycl.yield %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<4xf32>
func.func @loop(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %y = dycl.tensor_region -> (tensor<4xf32>) {
      %z = dycl.call_method "roll"(%h, %i) : (tensor<4xf32>, i64) -> tensor<4xf32>
      %w = dycl.call_method "mul"(%z, %c1) : (tensor<4xf32>, i64) -> tensor<4xf32>
      dycl.yield %w : tensor<4xf32>
    }
    dycl.yield %y : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}

// Tuples never cross the boundary: they are passed and returned as leaves.
// CHECK-LABEL: func.func @tuples
// CHECK-SAME:    (%[[S:.*]]: tuple<tensor<4xf32>, tensor<4xf32>>)
// CHECK-NEXT:    %[[S0:.*]] = dycl.get_item %[[S]][0 : i64]
// CHECK-NEXT:    %[[S1:.*]] = dycl.get_item %[[S]][1 : i64]
// CHECK-NEXT:    %[[O0:.*]], %[[O1:.*]] = dycl.call_subgraph @sub_5(%[[S0]], %[[S1]]) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %[[T:.*]] = dycl.make_tuple(%[[O0]], %[[O1]]) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
// CHECK-NEXT:    dycl.return %[[T]] : tuple<tensor<4xf32>, tensor<4xf32>>
func.func @tuples(%s: tuple<tensor<4xf32>, tensor<4xf32>>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
  %t = dycl.tensor_region -> (tuple<tensor<4xf32>, tensor<4xf32>>) {
    %h = dycl.get_item %s[0] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
    %c = dycl.get_item %s[1] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
    %n = dycl.call_module "cell"(%h, %c) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
    dycl.yield %n : tuple<tensor<4xf32>, tensor<4xf32>>
  }
  dycl.return %t : tuple<tensor<4xf32>, tensor<4xf32>>
}

// The outlined sub-DNNs, appended in order.
// CHECK-LABEL: func.func @sub_1
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<i1>) attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[P:.*]] = dycl.call_module "pre"(%[[X]])
// CHECK-NEXT:    %[[M:.*]] = dycl.call_method "mean"(%[[P]])
// CHECK-NEXT:    %[[G:.*]] = dycl.call_function "_operator.gt"(%[[M]], %[[C0]])
// CHECK-NEXT:    func.return %[[P]], %[[G]] : tensor<1x4xf32>, tensor<i1>
// CHECK-LABEL: func.func @sub_2
// CHECK-SAME:    (%[[H:.*]]: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[A:.*]] = dycl.call_module "a"(%[[H]])
// CHECK-NEXT:    func.return %[[A]] : tensor<1x4xf32>
// CHECK-LABEL: func.func @sub_3
// CHECK-SAME:    (%[[H:.*]]: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[B:.*]] = dycl.call_module "b"(%[[H]])
// CHECK-NEXT:    func.return %[[B]] : tensor<1x4xf32>
// CHECK-LABEL: func.func @sub_4
// CHECK-SAME:    (%[[H:.*]]: tensor<4xf32>, %[[I:.*]]: i64) -> tensor<4xf32> attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[Z:.*]] = dycl.call_method "roll"(%[[H]], %[[I]])
// CHECK-NEXT:    %[[W:.*]] = dycl.call_method "mul"(%[[Z]], %[[C1]])
// CHECK-NEXT:    func.return %[[W]] : tensor<4xf32>
// CHECK-LABEL: func.func @sub_5
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[T:.*]] = dycl.make_tuple(%[[A]], %[[B]])
// CHECK-NEXT:    %[[H:.*]] = dycl.get_item %[[T]][0 : i64]
// CHECK-NEXT:    %[[C:.*]] = dycl.get_item %[[T]][1 : i64]
// CHECK-NEXT:    %[[N:.*]] = dycl.call_module "cell"(%[[H]], %[[C]])
// CHECK-NEXT:    %[[N0:.*]] = dycl.get_item %[[N]][0 : i64]
// CHECK-NEXT:    %[[N1:.*]] = dycl.get_item %[[N]][1 : i64]
// CHECK-NEXT:    func.return %[[N0]], %[[N1]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NOT:   func.func
