// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s
// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}',constant-propagation,extract-hcfg,outline-subgraphs | filecheck %s --check-prefix=OUT

// A boolean mask selects a number of rows only the data decides: the result has a
// dynamic dimension (`?`), what is computed from it keeps it, and its size read on
// the host (`len`, `.shape[0]`) is a run-time scalar, never folded. The op that
// makes the size (and only it) is marked `dycl.data_dependent_shape`. Item
// assignment through the mask keeps the static shape. After outlining, the
// sub-DNN after the host's branch takes the `?x8` tensor.

// CHECK-LABEL: func.func @forward
// CHECK:         %sel = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape} : (tensor<6x8xf32>, tensor<6xi1>) -> tensor<?x8xf32>
// CHECK-NEXT:    %t = dycl.call_function "torch.tanh"(%sel) : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NOT:     dycl.data_dependent_shape
// CHECK-NEXT:    %n = dycl.call_function "builtins.len"(%sel) : (tensor<?x8xf32>) -> i64
// CHECK-NEXT:    %shape = dycl.call_function "builtins.getattr"(%t, %attr) : (tensor<?x8xf32>, !dycl.pyobj) -> !dycl.pyobj
// CHECK:         %rows = dycl.get_item %shape[0 : i64] : !dycl.pyobj -> i64
// CHECK:         %upd = dycl.call_function "dycl.tensor_ops.setitem"(%x, %mask, %c) : (tensor<6x8xf32>, tensor<6xi1>, f64) -> tensor<6x8xf32>
// CHECK:         %r = dycl.if %big -> (tensor<8xf32>)
// CHECK:           %s = dycl.call_method "sum"(%t, %z) : (tensor<?x8xf32>, i64) -> tensor<8xf32>

// OUT:     func.func @forward
// OUT:       %shape = dycl.call_function "builtins.getattr"
// OUT:       dycl.call_subgraph @sub_2(%t) : (tensor<?x8xf32>) -> tensor<8xf32>
// OUT:     func.func @sub_2(%t: tensor<?x8xf32>) -> tensor<8xf32> attributes {dycl.subgraph}
func.func @forward(%x: tensor<6x8xf32>) -> !dycl.any {
  %m1 = arith.constant -1 : i64
  %z = arith.constant 0 : i64
  %two = arith.constant 2 : i64
  %c = arith.constant 0.5 : f64
  %attr = dycl.constant "shape" : !dycl.pyobj
  %rsum = dycl.call_method "sum"(%x, %m1) : (tensor<6x8xf32>, i64) -> !dycl.any
  %mask = dycl.call_function "_operator.gt"(%rsum, %z) : (!dycl.any, i64) -> !dycl.any
  %sel = dycl.call_function "_operator.getitem"(%x, %mask) : (tensor<6x8xf32>, !dycl.any) -> !dycl.any
  %t = dycl.call_function "torch.tanh"(%sel) : (!dycl.any) -> !dycl.any
  %n = dycl.call_function "builtins.len"(%sel) : (!dycl.any) -> !dycl.any
  %shape = dycl.call_function "builtins.getattr"(%t, %attr) : (!dycl.any, !dycl.pyobj) -> !dycl.any
  %rows = dycl.get_item %shape[0] : !dycl.any -> !dycl.any
  %upd = dycl.call_function "dycl.tensor_ops.setitem"(%x, %mask, %c) : (tensor<6x8xf32>, !dycl.any, f64) -> !dycl.any
  %gt = dycl.call_function "_operator.gt"(%rows, %two) : (!dycl.any, i64) -> !dycl.any
  %big = dycl.to_bool %gt : !dycl.any
  %r = dycl.if %big -> (!dycl.any) {
    %s = dycl.call_method "sum"(%t, %z) : (!dycl.any, i64) -> !dycl.any
    dycl.yield %s : !dycl.any
  } else {
    %u = dycl.call_method "sum"(%upd, %z) : (!dycl.any, i64) -> !dycl.any
    dycl.yield %u : !dycl.any
  }
  %out = dycl.make_tuple(%r, %n) : (!dycl.any, !dycl.any) -> !dycl.any
  dycl.return %out : !dycl.any
}
