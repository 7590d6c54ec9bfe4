// RUN: dycl-opt %s -p constant-propagation | filecheck %s

// Python arithmetic on constants folds, through chains; dead constants go.
// CHECK-LABEL: func.func @python_arith
// CHECK-NEXT:    %[[M:.*]] = arith.constant 20 : i64
// CHECK-NEXT:    %[[S:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %[[LT:.*]] = arith.constant true
// CHECK-NEXT:    %[[FD:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    dycl.return %[[M]], %[[S]], %[[LT]], %[[FD]] : i64, f64, i1, i64
func.func @python_arith() -> (i64, f64, i1, i64) {
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %c4 = arith.constant 4 : i64
  %f = arith.constant 4.0 : f64
  %a = dycl.call_function "_operator.add"(%c2, %c3) : (i64, i64) -> i64
  %m = dycl.call_function "_operator.mul"(%a, %c4) : (i64, i64) -> i64
  %s = dycl.call_function "math.sqrt"(%f) : (f64) -> f64
  %lt = dycl.call_function "_operator.lt"(%c2, %c3) : (i64, i64) -> i1
  %fd = dycl.call_function "_operator.floordiv"(%c4, %c2) : (i64, i64) -> i64
  dycl.return %m, %s, %lt, %fd : i64, f64, i1, i64
}

// Not folded: an operand known only at run time, a tensor function, and a
// call that raises (left for the run time to raise).
// CHECK-LABEL: func.func @python_arith_unknown
// CHECK-SAME:    (%[[N:.*]]: i64, %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i64
// CHECK:         %[[A:.*]] = dycl.call_function "_operator.add"(%[[N]], %[[C0]]) : (i64, i64) -> i64
// CHECK:         %[[R:.*]] = dycl.call_function "torch.relu"(%[[X]])
// CHECK:         %[[D:.*]] = dycl.call_function "_operator.floordiv"(%[[C0]], %[[C0]]) : (i64, i64) -> i64
// CHECK:         dycl.return %[[A]], %[[R]], %[[D]] : i64, tensor<4xf32>, i64
func.func @python_arith_unknown(%n: i64, %x: tensor<4xf32>) -> (i64, tensor<4xf32>, i64) {
  %c0 = arith.constant 0 : i64
  %a = dycl.call_function "_operator.add"(%n, %c0) : (i64, i64) -> i64
  %r = dycl.call_function "torch.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %d = dycl.call_function "_operator.floordiv"(%c0, %c0) : (i64, i64) -> i64
  dycl.return %a, %r, %d : i64, tensor<4xf32>, i64
}

// Shape queries on a static tensor type become constants; whole shapes are
// torch.Size, as in eager (built on the host from the constant dimensions).
// CHECK-LABEL: func.func @shape_queries
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[S1:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[D:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[N:.*]] = arith.constant 6 : i64
// CHECK-NEXT:    %[[SZD:.*]] = dycl.constant [2 : i64, 3 : i64] : !dycl.pyobj
// CHECK-NEXT:    %[[SZ:.*]] = dycl.call_function "torch.Size"(%[[SZD]]) : (!dycl.pyobj) -> !dycl.pyobj
// CHECK-NEXT:    %[[SHD:.*]] = dycl.constant [2 : i64, 3 : i64] : !dycl.pyobj
// CHECK-NEXT:    %[[SH:.*]] = dycl.call_function "torch.Size"(%[[SHD]]) : (!dycl.pyobj) -> !dycl.pyobj
// CHECK-NEXT:    %[[ND:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[G:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    dycl.return %[[S1]], %[[D]], %[[N]], %[[SZ]], %[[SH]], %[[ND]], %[[G]] : i64, i64, i64, !dycl.pyobj, !dycl.pyobj, i64, i64
func.func @shape_queries(%x: tensor<2x3xf32>) -> (i64, i64, i64, !dycl.pyobj, !dycl.pyobj, i64, i64) {
  %c1 = arith.constant 1 : i64
  %s1 = dycl.call_method "size"(%x, %c1) : (tensor<2x3xf32>, i64) -> i64
  %d = dycl.call_method "dim"(%x) : (tensor<2x3xf32>) -> i64
  %n = dycl.call_method "numel"(%x) : (tensor<2x3xf32>) -> i64
  %sz = dycl.call_method "size"(%x) : (tensor<2x3xf32>) -> !dycl.pyobj
  %shape = dycl.constant "shape" : !dycl.pyobj
  %sh = dycl.call_function "builtins.getattr"(%x, %shape) : (tensor<2x3xf32>, !dycl.pyobj) -> !dycl.pyobj
  %ndim = dycl.constant "ndim" : !dycl.pyobj
  %nd = dycl.call_function "builtins.getattr"(%x, %ndim) : (tensor<2x3xf32>, !dycl.pyobj) -> i64
  %g = dycl.get_item %sh[1] : !dycl.pyobj -> i64
  dycl.return %s1, %d, %n, %sz, %sh, %nd, %g : i64, i64, i64, !dycl.pyobj, !dycl.pyobj, i64, i64
}

// Not folded: no static type yet, a run-time dimension index, a keyword argument.
// CHECK-LABEL: func.func @shape_queries_unknown
// CHECK-SAME:    (%[[U:.*]]: !dycl.any, %[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: i64)
// CHECK:         %[[A:.*]] = dycl.call_method "size"(%[[U]], %{{.*}}) : (!dycl.any, i64) -> i64
// CHECK:         %[[B:.*]] = dycl.call_method "size"(%[[X]], %[[I]]) : (tensor<2x3xf32>, i64) -> i64
// CHECK:         %[[C:.*]] = dycl.call_method "size"(%[[X]], %{{.*}}) {kwargs = ["dim"]} : (tensor<2x3xf32>, i64) -> i64
// CHECK:         dycl.return %[[A]], %[[B]], %[[C]] : i64, i64, i64
func.func @shape_queries_unknown(%u: !dycl.any, %x: tensor<2x3xf32>, %i: i64) -> (i64, i64, i64) {
  %c1 = arith.constant 1 : i64
  %a = dycl.call_method "size"(%u, %c1) : (!dycl.any, i64) -> i64
  %b = dycl.call_method "size"(%x, %i) : (tensor<2x3xf32>, i64) -> i64
  %c = dycl.call_method "size"(%x, %c1) {kwargs = ["dim"]} : (tensor<2x3xf32>, i64) -> i64
  dycl.return %a, %b, %c : i64, i64, i64
}

// to_bool of a constant folds; to_bool of an i1 is that i1; of a tensor it stays.
// CHECK-LABEL: func.func @to_bool
// CHECK-SAME:    (%[[B:.*]]: i1, %[[T:.*]]: tensor<i1>)
// CHECK-NEXT:    %[[F:.*]] = arith.constant false
// CHECK-NEXT:    %[[S:.*]] = arith.constant true
// CHECK-NEXT:    %[[X:.*]] = arith.constant true
// CHECK-NEXT:    %[[D:.*]] = dycl.to_bool %[[T]] : tensor<i1>
// CHECK-NEXT:    dycl.return %[[F]], %[[S]], %[[X]], %[[B]], %[[D]] : i1, i1, i1, i1, i1
func.func @to_bool(%b: i1, %t: tensor<i1>) -> (i1, i1, i1, i1, i1) {
  %c0 = arith.constant 0 : i64
  %f = dycl.to_bool %c0 : i64
  %str = dycl.constant "x" : !dycl.pyobj
  %s = dycl.to_bool %str : !dycl.pyobj
  %t1 = arith.constant true
  %f1 = arith.constant false
  %xor = arith.xori %t1, %f1 : i1
  %x = dycl.to_bool %xor : i1
  %i = dycl.to_bool %b : i1
  %d = dycl.to_bool %t : tensor<i1>
  dycl.return %f, %s, %x, %i, %d : i1, i1, i1, i1, i1
}

// A known condition inlines the taken branch (both sides yield).
// CHECK-LABEL: func.func @if_yield
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Z:.*]] = dycl.call_module "b"(%[[B]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[W:.*]] = dycl.call_module "c"(%[[Z]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    dycl.return %[[W]] : tensor<4xf32>
func.func @if_yield(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %gt = dycl.call_function "_operator.gt"(%c2, %c3) : (i64, i64) -> i1
  %c = dycl.to_bool %gt : i1
  %r = dycl.if %c -> (tensor<4xf32>) {
    %y = dycl.call_module "a"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %y : tensor<4xf32>
  } else {
    %z = dycl.call_module "b"(%b) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %z : tensor<4xf32>
  }
  %w = dycl.call_module "c"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %w : tensor<4xf32>
}

// A taken early return ends the function there: what followed is dead.
// CHECK-LABEL: func.func @if_early_return
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Y:.*]] = dycl.call_module "a"(%[[A]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    dycl.return %[[Y]] : tensor<4xf32>
// CHECK-NEXT:  }
func.func @if_early_return(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : i64
  %c = dycl.to_bool %c1 : i64
  %r = dycl.if %c -> (tensor<4xf32>) {
    %y = dycl.call_module "a"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.return %y : tensor<4xf32>
  } else {
    dycl.yield %a : tensor<4xf32>
  }
  %z = dycl.call_module "b"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %z : tensor<4xf32>
}

// The early return is not taken: the else branch is inlined and the rest stays.
// CHECK-LABEL: func.func @if_early_return_not_taken
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Z:.*]] = dycl.call_module "b"(%[[A]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    dycl.return %[[Z]] : tensor<4xf32>
func.func @if_early_return_not_taken(%a: tensor<4xf32>) -> tensor<4xf32> {
  %false = arith.constant false
  %r = dycl.if %false -> (tensor<4xf32>) {
    %y = dycl.call_module "a"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.return %y : tensor<4xf32>
  } else {
    dycl.yield %a : tensor<4xf32>
  }
  %z = dycl.call_module "b"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %z : tensor<4xf32>
}

// A condition known only at run time leaves the dycl.if in place.
// CHECK-LABEL: func.func @if_unknown
// CHECK-SAME:    (%[[T:.*]]: tensor<i1>, %[[A:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[T]] : tensor<i1>
// CHECK-NEXT:    dycl.if %[[C]] {
// CHECK-NEXT:      dycl.return %[[A]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[A]] : tensor<4xf32>
func.func @if_unknown(%t: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %c = dycl.to_bool %t : tensor<i1>
  dycl.if %c {
    dycl.return %a : tensor<4xf32>
  } else {
    dycl.yield
  }
  dycl.return %a : tensor<4xf32>
}

// A taken dycl.break inside a loop ends the loop body there.
// CHECK-LABEL: func.func @if_break
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i64)
// CHECK:         %[[R:.*]] = dycl.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[H:.*]] = %[[X]]) -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[Y:.*]] = dycl.call_module "a"(%[[H]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      dycl.break %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<4xf32>
func.func @if_break(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %t = arith.constant true
  %r = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %y = dycl.call_module "a"(%h) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.if %t {
      dycl.break %y : tensor<4xf32>
    } else {
      dycl.yield
    }
    %z = dycl.call_module "b"(%y) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %z : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}

// An if result nobody reads is no longer yielded (here an int on one path and a
// float on the other, which would otherwise force per-path copies later); the
// pure ops that only fed it become dead and go.
// CHECK-LABEL: func.func @unused_if_result
// CHECK:         %[[R:.*]] = dycl.if %{{.*}} -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[Y:.*]] = dycl.call_module "a"
// CHECK-NEXT:      dycl.yield %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<4xf32>
func.func @unused_if_result(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r, %s = dycl.if %c -> (tensor<4xf32>, !dycl.any) {
    %y = dycl.call_module "a"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %i = arith.constant 2 : i64
    dycl.yield %y, %i : tensor<4xf32>, i64
  } else {
    %f = arith.constant 5.000000e-01 : f64
    dycl.yield %x, %f : tensor<4xf32>, f64
  }
  dycl.return %r : tensor<4xf32>
}

// An out-of-range query in a branch that a constant condition removes is no
// error: the range check runs after folding.
// CHECK-LABEL: func.func @guarded_out_of_range
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    dycl.return %[[C2]] : i64
func.func @guarded_out_of_range(%x: tensor<2x3xf32>) -> i64 {
  %c2 = arith.constant 2 : i64
  %r = dycl.call_method "dim"(%x) : (tensor<2x3xf32>) -> i64
  %gt = dycl.call_function "_operator.gt"(%r, %c2) : (i64, i64) -> i1
  %b = dycl.to_bool %gt : i1
  %s = dycl.if %b -> (i64) {
    %s2 = dycl.call_method "size"(%x, %c2) : (tensor<2x3xf32>, i64) -> i64
    dycl.yield %s2 : i64
  } else {
    dycl.yield %c2 : i64
  }
  dycl.return %s : i64
}
