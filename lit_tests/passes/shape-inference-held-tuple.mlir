// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// A tuple a data-dependent loop grows (`scores += (x,)`, transformers' generate
// style) enters as `()` and leaves one element longer each iteration: it is carried
// as a held list of its elements (`!dycl.list`), its `+` run by the host, and
// `torch.stack` over it has the loop's trip count as a dynamic size.

// CHECK-LABEL: func.func @generate
// CHECK:         %[[SCORES:.*]], %{{.*}} = dycl.while (%{{.*}} = %empty, %{{.*}} = %x) -> (!dycl.list<tensor<1x4xf32>>, tensor<1x4xf32>) cond {
// CHECK:         ^bb0(%{{.*}}: !dycl.list<tensor<1x4xf32>>, %{{.*}}: tensor<1x4xf32>):
// CHECK:           %one = dycl.make_tuple(%{{.*}}) : (tensor<1x4xf32>) -> tuple<tensor<1x4xf32>>
// CHECK:           %grown = dycl.call_function "_operator.add"(%{{.*}}, %one) {dycl.on_host} : (!dycl.list<tensor<1x4xf32>>, tuple<tensor<1x4xf32>>) -> !dycl.list<tensor<1x4xf32>>
// CHECK:         %stacked = dycl.call_function "torch.stack"(%[[SCORES]], %c1) {dycl.on_host, dycl.data_dependent_shape} : (!dycl.list<tensor<1x4xf32>>, i64) -> tensor<1x?x4xf32>
func.func @generate(%x: tensor<1x4xf32>) -> !dycl.any {
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c8 = arith.constant 8 : i64
  %empty = dycl.make_tuple() : () -> !dycl.pyobj
  %scores, %h = dycl.while (%s0 = %empty, %x0 = %x) -> (!dycl.any, !dycl.any) cond {
    %sum = dycl.call_method "sum"(%x0) : (!dycl.any) -> !dycl.any
    %lt = dycl.call_function "_operator.lt"(%sum, %c8) : (!dycl.any, i64) -> !dycl.any
    %go = dycl.to_bool %lt : !dycl.any
    dycl.condition %go
  } do {
  ^bb0(%s1: !dycl.any, %x1: !dycl.any):
    %x2 = dycl.call_function "_operator.mul"(%x1, %c2) : (!dycl.any, i64) -> !dycl.any
    %one = dycl.make_tuple(%x2) : (!dycl.any) -> !dycl.any
    %grown = dycl.call_function "_operator.add"(%s1, %one) : (!dycl.any, !dycl.any) -> !dycl.any
    dycl.yield %grown, %x2 : !dycl.any, !dycl.any
  }
  %stacked = dycl.call_function "torch.stack"(%scores, %c1) : (!dycl.any, i64) -> !dycl.any
  dycl.return %stacked : !dycl.any
}
