// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// A tensor that grows in a loop the data decides (greedy decoding's
// `ids = torch.cat([ids, nxt], 1)`, NMS's `keep = torch.cat([keep, i])`): it enters
// as 2x1 and comes back 2x2, so it is carried as `2x?` and the loop typed again
// from its start; the 2x1 initial value flows where `2x?` is declared. A change of
// rank is still an error (shape-inference-loop.mlir).

// CHECK-LABEL: func.func @greedy
// CHECK:         %{{.*}}, %[[IDS:.*]] = dycl.while (%{{.*}} = %{{.*}}, %{{.*}} = %ids) -> (tensor<2xi1>, tensor<2x?xi64>) cond {
// CHECK:         ^bb0(%{{.*}}: tensor<2xi1>, %[[CARRIED:.*]]: tensor<2x?xi64>):
// CHECK:           %s = dycl.call_method "sum"(%[[CARRIED]], %c1, %t) {kwargs = ["keepdim"]} : (tensor<2x?xi64>, i64, i1) -> tensor<2x1xi64>
// CHECK:           %grown = dycl.call_function "torch.cat"(%pair, %c1) : (!dycl.pyobj, i64) -> tensor<2x?xi64>
// CHECK:           dycl.yield %{{.*}}, %grown : tensor<2xi1>, tensor<2x?xi64>
// CHECK:         dycl.return %[[IDS]] : tensor<2x?xi64>
func.func @greedy(%x: tensor<2x3xi64>) -> !dycl.any {
  %c1 = arith.constant 1 : i64
  %c5 = arith.constant 5 : i64
  %t = arith.constant true
  %ids = dycl.call_method "narrow"(%x, %c1, %c1, %c1) : (tensor<2x3xi64>, i64, i64, i64) -> !dycl.any
  %done = dycl.call_function "_operator.eq"(%x, %x) : (tensor<2x3xi64>, tensor<2x3xi64>) -> !dycl.any
  %done0 = dycl.call_method "any"(%done, %c1) : (!dycl.any, i64) -> !dycl.any
  %nd, %r = dycl.while (%done_0 = %done0, %ids_0 = %ids) -> (!dycl.any, !dycl.any) cond {
    %all = dycl.call_method "all"(%done_0) : (!dycl.any) -> !dycl.any
    %b = dycl.to_bool %all : !dycl.any
    %go = arith.xori %b, %t : i1
    dycl.condition %go
  } do {
  ^bb0(%done_1: !dycl.any, %ids_1: !dycl.any):
    %s = dycl.call_method "sum"(%ids_1, %c1, %t) {kwargs = ["keepdim"]} : (!dycl.any, i64, i1) -> !dycl.any
    %pair = dycl.make_tuple(%ids_1, %s) {is_list} : (!dycl.any, !dycl.any) -> !dycl.pyobj
    %grown = dycl.call_function "torch.cat"(%pair, %c1) : (!dycl.pyobj, i64) -> !dycl.any
    %sq = dycl.call_method "squeeze"(%s, %c1) : (!dycl.any, i64) -> !dycl.any
    %hit = dycl.call_function "_operator.gt"(%sq, %c5) : (!dycl.any, i64) -> !dycl.any
    %done_2 = dycl.call_function "_operator.or_"(%done_1, %hit) : (!dycl.any, !dycl.any) -> !dycl.any
    dycl.yield %done_2, %grown : !dycl.any, !dycl.any
  }
  dycl.return %r : !dycl.any
}
