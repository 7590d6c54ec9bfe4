// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.call_subgraph calls a func.func marked dycl.subgraph.

// CHECK-LABEL: func.func @sub_0
// CHECK-SAME:    (%[[A:.*]]: tensor<1x8xf32>) -> (tensor<1x4xf32>, tensor<i1>) attributes {dycl.subgraph} {
// CHECK:         %[[H:.*]] = dycl.call_module "fc"(%[[A]]) : (tensor<1x8xf32>) -> tensor<1x4xf32>
// CHECK:         %[[P:.*]] = dycl.call_function "torch.all"(%[[H]]) : (tensor<1x4xf32>) -> tensor<i1>
// CHECK:         func.return %[[H]], %[[P]] : tensor<1x4xf32>, tensor<i1>
func.func @sub_0(%a: tensor<1x8xf32>) -> (tensor<1x4xf32>, tensor<i1>) attributes {dycl.subgraph} {
  %h = dycl.call_module "fc"(%a) : (tensor<1x8xf32>) -> tensor<1x4xf32>
  %p = dycl.call_function "torch.all"(%h) : (tensor<1x4xf32>) -> tensor<i1>
  func.return %h, %p : tensor<1x4xf32>, tensor<i1>
}

// CHECK-LABEL: func.func @sub_1
// CHECK-SAME:    () attributes {dycl.subgraph}
func.func @sub_1() attributes {dycl.subgraph} {
  func.return
}

// CHECK-LABEL: func.func @host
// CHECK-SAME:    (%[[X:.*]]: tensor<1x8xf32>)
// CHECK:         %[[H:.*]], %[[P:.*]] = dycl.call_subgraph @sub_0(%[[X]]) : (tensor<1x8xf32>) -> (tensor<1x4xf32>, tensor<i1>)
// CHECK:         dycl.call_subgraph @sub_1() : () -> ()
// CHECK:         %[[C:.*]] = dycl.to_bool %[[P]] : tensor<i1>
// CHECK:         dycl.return %[[H]] : tensor<1x4xf32>
func.func @host(%x: tensor<1x8xf32>) -> tensor<1x4xf32> {
  %h, %p = dycl.call_subgraph @sub_0(%x) : (tensor<1x8xf32>) -> (tensor<1x4xf32>, tensor<i1>)
  dycl.call_subgraph @sub_1() : () -> ()
  %c = dycl.to_bool %p : tensor<i1>
  dycl.return %h : tensor<1x4xf32>
}
