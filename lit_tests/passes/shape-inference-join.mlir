// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// Where paths meet, a host number that one path knows (the constant 1) and the
// other reads from data (`k = max(int(n), 1)`) is known only at run time: the
// slice `x[:, :k]` has a size only the data decides. It was typed 1x1 from the
// constant path, and `x[:, :k].shape[1]` compiled to 1 for every input; a slice
// with a run-time bound now makes a dynamic dimension, and the width is read at
// run time.

// CHECK:     %kept = dycl.call_function "_operator.getitem"(%x, %idx) {dycl.data_dependent_shape} : (tensor<1x6xf32>, !dycl.pyobj) -> tensor<1x?xf32>
// CHECK:     %width = dycl.get_item %shape[1 : i64] : !dycl.pyobj -> i64
// CHECK:     dycl.return %width : i64
func.func @forward(%x: tensor<1x6xf32>) -> !dycl.any {
  %half = arith.constant 5.000000e-01 : f64
  %one = arith.constant 1 : i64
  %none = dycl.constant none : !dycl.pyobj
  %attr = dycl.constant "shape" : !dycl.pyobj
  %gt = dycl.call_function "_operator.gt"(%x, %half) : (tensor<1x6xf32>, f64) -> !dycl.any
  %sum = dycl.call_method "sum"(%gt) : (!dycl.any) -> !dycl.any
  %n = dycl.item %sum : !dycl.any -> i64
  %lt = dycl.call_function "_operator.gt"(%one, %n) : (i64, i64) -> !dycl.any
  %small = dycl.to_bool %lt : !dycl.any
  %k = dycl.if %small -> (i64) {
    %c1 = arith.constant 1 : i64
    dycl.yield %c1 : i64
  } else {
    dycl.yield %n : i64
  }
  %stop = dycl.call_function "builtins.slice"(%none, %k, %none) : (!dycl.pyobj, i64, !dycl.pyobj) -> !dycl.any
  %all = dycl.call_function "builtins.slice"(%none, %none, %none) : (!dycl.pyobj, !dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
  %idx = dycl.make_tuple(%all, %stop) : (!dycl.pyobj, !dycl.any) -> !dycl.any
  %kept = dycl.call_function "_operator.getitem"(%x, %idx) : (tensor<1x6xf32>, !dycl.any) -> !dycl.any
  %shape = dycl.call_function "builtins.getattr"(%kept, %attr) : (!dycl.any, !dycl.pyobj) -> !dycl.any
  %width = dycl.get_item %shape[1] : !dycl.any -> !dycl.any
  dycl.return %width : !dycl.any
}
