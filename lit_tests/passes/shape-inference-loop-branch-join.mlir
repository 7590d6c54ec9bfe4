// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `if c: out = torch.cat([out, row])` in a loop body: the branches give `out` two
// sizes, and the code after the if (the rest of the iteration, then the next) cannot
// be copied into each branch. The if's result joins them with a dynamic dimension
// (the loop then carries `?x3` as well).
// CHECK-LABEL: func.func @keep_rows
// CHECK:         dycl.while (%{{.*}} = %{{.*}}, %{{.*}} = %empty) -> (i64, tensor<?x3xf32>) cond {
// CHECK:           %[[OUT:.*]] = dycl.if %{{.*}} -> (tensor<?x3xf32>) {
// CHECK:             dycl.yield %{{.*}} : tensor<?x3xf32>
// CHECK:           } else {
// CHECK:             dycl.yield %{{.*}} : tensor<?x3xf32>
// CHECK:           }
// CHECK:           dycl.yield %{{.*}}, %[[OUT]] : i64, tensor<?x3xf32>
func.func @keep_rows(%x: tensor<4x3xf32>) -> !dycl.any {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c4 = arith.constant 4 : i64
  %c3 = arith.constant 3 : i64
  %empty = dycl.call_method "new_zeros"(%x, %c0, %c3) : (tensor<4x3xf32>, i64, i64) -> !dycl.any
  %n, %kept = dycl.while (%i = %c0, %out = %empty) -> (!dycl.any, !dycl.any) cond {
    %lt = dycl.call_function "_operator.lt"(%i, %c4) : (!dycl.any, i64) -> !dycl.any
    %go = dycl.to_bool %lt : !dycl.any
    dycl.condition %go
  } do {
  ^bb0(%i_1: !dycl.any, %out_1: !dycl.any):
    %row = dycl.call_function "_operator.getitem"(%x, %i_1) : (tensor<4x3xf32>, !dycl.any) -> !dycl.any
    %s = dycl.call_method "sum"(%row) : (!dycl.any) -> !dycl.any
    %pos = dycl.to_bool %s : !dycl.any
    %out_2 = dycl.if %pos -> (!dycl.any) {
      %r2 = dycl.call_method "unsqueeze"(%row, %c0) : (!dycl.any, i64) -> !dycl.any
      %pair = dycl.make_tuple(%out_1, %r2) {is_list} : (!dycl.any, !dycl.any) -> !dycl.pyobj
      %grown = dycl.call_function "torch.cat"(%pair, %c0) : (!dycl.pyobj, i64) -> !dycl.any
      dycl.yield %grown : !dycl.any
    } else {
      dycl.yield %out_1 : !dycl.any
    }
    %i_2 = dycl.call_function "_operator.add"(%i_1, %c1) : (!dycl.any, i64) -> !dycl.any
    dycl.yield %i_2, %out_2 : !dycl.any, !dycl.any
  }
  dycl.return %kept : !dycl.any
}
