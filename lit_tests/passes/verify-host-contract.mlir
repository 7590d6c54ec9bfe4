// RUN: dycl-opt %s -p verify-host-contract | filecheck %s
// RUN: dycl-opt %s -p "verify-host-contract{allow-python=true}" | filecheck %s

// A host of control flow, arith scalars, sub-DNN calls, predicate reads, tuples
// and a builtin raise with a constant message meets the contract: unchanged.
// CHECK-LABEL: func.func @forward
// CHECK:         dycl.raise "builtins.AssertionError"
func.func @forward(%x: tensor<1x4xf32>) -> !dycl.pyobj {
  %p, %i = dycl.call_subgraph @sub_0(%x) : (tensor<1x4xf32>) -> (tensor<i1>, tensor<i64>)
  %c = dycl.to_bool %p : tensor<i1>
  %k = dycl.item %i : tensor<i64> -> i64
  %one = arith.constant 1 : i64
  %big = arith.cmpi sgt, %k, %one : i64
  dycl.if %big {
    %msg = dycl.constant "k too big" : !dycl.pyobj
    dycl.raise "builtins.AssertionError"(%msg) : !dycl.pyobj
    dycl.yield
  } else {
    dycl.yield
  }
  %r = dycl.make_tuple(%p, %k) : (tensor<i1>, i64) -> !dycl.pyobj
  dycl.return %r : !dycl.pyobj
}
func.func @sub_0(%x: tensor<1x4xf32>) -> (tensor<i1>, tensor<i64>) attributes {dycl.subgraph} {
  %s = dycl.call_method "sum"(%x) : (tensor<1x4xf32>) -> tensor<f32>
  %z = arith.constant 0 : i64
  %p = dycl.call_function "_operator.gt"(%s, %z) : (tensor<f32>, i64) -> tensor<i1>
  %i = dycl.call_method "argmax"(%x) : (tensor<1x4xf32>) -> tensor<i64>
  func.return %p, %i : tensor<i1>, tensor<i64>
}
