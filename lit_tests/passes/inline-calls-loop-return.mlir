// RUN: dycl-opt %s -p inline-calls 2>&1 | filecheck %s
// RUN: dycl-opt %s -p inline-calls | dycl-opt | filecheck %s
// RUN: not dycl-opt %s -p 'inline-calls{strict=true}' 2>&1 | filecheck %s --check-prefix=STRICT

// An early dycl.return inside a loop of the callee returns from the callee;
// once inlined it would return from the caller, and structured control flow has
// no other way to say it. Such calls stay, legal IR and no diagnostic (the
// callee stays too, being still used); with strict=true they are an error.
// CHECK-NOT:   error
// CHECK-LABEL: func.func private @loop_exit
// CHECK:         dycl.for
// CHECK:           dycl.return
// CHECK-LABEL: func.func private @while_exit
// CHECK:         dycl.while
// CHECK:           dycl.return
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i64)
// CHECK-NEXT:    %[[A:.*]] = func.call @loop_exit(%[[X]], %[[N]]) : (tensor<4xf32>, i64) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = func.call @while_exit(%[[A]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    dycl.return %[[B]] : tensor<4xf32>
func.func private @loop_exit(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  dycl.for %i = %c0 to %n step %c1 {
    %c = dycl.to_bool %i : i64
    dycl.if %c {
      dycl.return %x : tensor<4xf32>
    } else {
      dycl.yield
    }
    dycl.yield
  }
  %y = dycl.call_module "fc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}
func.func private @while_exit(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = dycl.while (%h = %x) -> (tensor<4xf32>) max_iterations 8 cond {
    %s = dycl.call_method "sum"(%h) : (tensor<4xf32>) -> tensor<f32>
    %c = dycl.to_bool %s : tensor<f32>
    dycl.condition %c
  } do {
  ^bb0(%b: tensor<4xf32>):
    %s = dycl.call_method "max"(%b) : (tensor<4xf32>) -> tensor<f32>
    %c = dycl.to_bool %s : tensor<f32>
    dycl.if %c {
      dycl.return %b : tensor<4xf32>
    } else {
      dycl.yield
    }
    %n = dycl.call_module "step"(%b) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %n : tensor<4xf32>
  }
  dycl.return %w : tensor<4xf32>
}
// STRICT: inline-calls-loop-return.mlir:[[# @LINE + 3]]:3: error: cannot inline the call to @loop_exit: it returns early from inside 'dycl.for'
// STRICT-NOT: error
func.func @forward(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %a = func.call @loop_exit(%x, %n) : (tensor<4xf32>, i64) -> tensor<4xf32>
  %b = func.call @while_exit(%a) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %b : tensor<4xf32>
}
