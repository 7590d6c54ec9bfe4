// The pipeline's shape-inference finds the model through the module's
// dycl.model attribute, imported only when --model names it too (opening an
// .mlir file must not run Python it names); sed fills in the examples directory.
// RUN: sed 's|@EXAMPLES@|%examples|' %s | dycl-opt -p dycl-default --model %examples/branchy.py:make_model | filecheck %s
// RUN: sed 's|@EXAMPLES@|%examples|' %s | dycl-opt -p dycl-no-hoist --model %examples/branchy.py:make_model | filecheck %s --check-prefix=NOHOIST
// RUN: sed 's|@EXAMPLES@|%examples|' %s | not dycl-opt -p dycl-default 2>&1 | filecheck %s --check-prefix=UNTRUSTED
// RUN: not dycl-opt %s -p dycl-default --model @EXAMPLES@/branchy.py:make_model 2>&1 | filecheck %s --check-prefix=NOFILE

// UNTRUSTED: dycl-opt: error: the IR names its model in 'dycl.model' ({{.*}}/branchy.py:make_model), but Python files named inside IR are not imported: give it on the command line, e.g. dycl-opt --model {{.*}}/branchy.py:make_model
// NOFILE: error: model file '@EXAMPLES@/branchy.py' does not exist

// @forward is the frontend's IR for examples/branchy.py: the host keeps the
// branch, each straight-line piece of tensor work becomes a sub-DNN.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16xf32>) -> tensor<1x16xf32> {
// CHECK-NEXT:    %[[H:.*]], %[[G:.*]] = dycl.call_subgraph @sub_0(%[[X]]) : (tensor<1x16xf32>) -> (tensor<1x16xf32>, tensor<i1>)
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[G]] : tensor<i1>
// CHECK-NEXT:    dycl.if %[[C]] {
// CHECK-NEXT:      %[[A:.*]] = dycl.call_subgraph @sub_1(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:      dycl.return %[[A]] : tensor<1x16xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[B:.*]] = dycl.call_subgraph @sub_2(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    dycl.return %[[B]] : tensor<1x16xf32>
// CHECK-NEXT:  }

// @extras: the constant loop is unrolled, the branch on a constant flag
// (self.training) folded, and `contiguous` (an identity) removed by
// hoist-computation-free, but not by dycl-no-hoist.
// CHECK-LABEL: func.func @extras
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>) {
// CHECK-NEXT:    %[[K:.*]] = dycl.call_subgraph @sub_3(%[[X]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    dycl.return %[[K]], %[[X]] : tensor<1x16xf32>, tensor<1x16xf32>
// CHECK-NEXT:  }

// CHECK-LABEL: func.func @sub_0
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16xf32>) -> (tensor<1x16xf32>, tensor<i1>) attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[P:.*]] = dycl.call_module "pre"(%[[X]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    %[[M:.*]] = dycl.call_method "mean"(%[[P]]) : (tensor<1x16xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[G:.*]] = dycl.call_function "_operator.gt"(%[[M]], %[[Z]]) : (tensor<f32>, i64) -> tensor<i1>
// CHECK-NEXT:    func.return %[[P]], %[[G]] : tensor<1x16xf32>, tensor<i1>
// CHECK-LABEL: func.func @sub_1
// CHECK-SAME:    (%[[H:.*]]: tensor<1x16xf32>) -> tensor<1x16xf32> attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[A0:.*]] = dycl.call_module "a.0"(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    %[[A1:.*]] = dycl.call_module "a.1"(%[[A0]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    %[[A2:.*]] = dycl.call_module "a.2"(%[[A1]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    func.return %[[A2]] : tensor<1x16xf32>
// CHECK-LABEL: func.func @sub_2
// CHECK-SAME:    (%[[H:.*]]: tensor<1x16xf32>) -> tensor<1x16xf32> attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[Y:.*]] = dycl.call_module "b"(%[[H]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    %[[R:.*]] = dycl.call_function "torch.relu"(%[[Y]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x16xf32>
// CHECK-LABEL: func.func @sub_3
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16xf32>) -> tensor<1x16xf32> attributes {dycl.subgraph} {
// CHECK-NEXT:    %[[Y0:.*]] = dycl.call_module "a.1"(%[[X]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    %[[Y1:.*]] = dycl.call_module "a.1"(%[[Y0]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    func.return %[[Y1]] : tensor<1x16xf32>

// NOHOIST-LABEL: func.func @sub_3
// NOHOIST-NEXT:    %[[Y0:.*]] = dycl.call_module "a.1"
// NOHOIST-NEXT:    %[[Y1:.*]] = dycl.call_module "a.1"(%[[Y0]])
// NOHOIST-NEXT:    %[[K:.*]] = dycl.call_method "contiguous"(%[[Y1]]) : (tensor<1x16xf32>) -> tensor<1x16xf32>
// NOHOIST-NEXT:    func.return %[[K]] : tensor<1x16xf32>

builtin.module attributes {dycl.model = "@EXAMPLES@/branchy.py:make_model"} {
  func.func @forward(%x: tensor<1x16xf32>) -> !dycl.any {
    %h = dycl.call_module "pre"(%x) : (tensor<1x16xf32>) -> !dycl.any
    %0 = dycl.call_method "mean"(%h) : (!dycl.any) -> !dycl.any
    %1 = arith.constant 0 : i64
    %2 = dycl.call_function "_operator.gt"(%0, %1) : (!dycl.any, i64) -> !dycl.any
    %3 = dycl.to_bool %2 : !dycl.any
    dycl.if %3 {
      %4 = dycl.call_module "a.0"(%h) : (!dycl.any) -> !dycl.any
      %5 = dycl.call_module "a.1"(%4) : (!dycl.any) -> !dycl.any
      %6 = dycl.call_module "a.2"(%5) : (!dycl.any) -> !dycl.any
      dycl.return %6 : !dycl.any
    } else {
      dycl.yield
    }
    %y = dycl.call_module "b"(%h) : (!dycl.any) -> !dycl.any
    %7 = dycl.call_function "torch.relu"(%y) : (!dycl.any) -> !dycl.any
    dycl.return %7 : !dycl.any
  }
  func.func @extras(%x: tensor<1x16xf32>) -> (!dycl.any, tensor<1x16xf32>) {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c2 = arith.constant 2 : i64
    %training = arith.constant false
    %r = dycl.for %i = %c0 to %c2 step %c1 iter_args(%h = %x) -> (!dycl.any) {
      %y = dycl.call_module "a.1"(%h) : (!dycl.any) -> !dycl.any
      dycl.yield %y : !dycl.any
    }
    %c = dycl.to_bool %training : i1
    %o = dycl.if %c -> (!dycl.any) {
      %d = dycl.call_module "b"(%r) : (!dycl.any) -> !dycl.any
      dycl.yield %d : !dycl.any
    } else {
      dycl.yield %r : !dycl.any
    }
    %k = dycl.call_method "contiguous"(%o) : (!dycl.any) -> !dycl.any
    dycl.return %k, %x : !dycl.any, tensor<1x16xf32>
  }
}
