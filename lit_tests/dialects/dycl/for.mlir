// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.for: with and without iter_args, !dycl.any carried slots, break.

// CHECK-LABEL: func.func @carried
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>, %[[N:.*]]: i64)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i64
// CHECK:         %[[C1:.*]] = arith.constant 1 : i64
// CHECK:         %[[R:.*]], %[[S:.*]] = dycl.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[H:.*]] = %[[X]], %[[K:.*]] = %[[C0]]) -> (tensor<1x4xf32>, i64) {
// CHECK-NEXT:      %[[H2:.*]] = dycl.call_module "block"(%[[H]]) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:      %[[K2:.*]] = dycl.call_function "_operator.add"(%[[K]], %[[I]]) : (i64, i64) -> i64
// CHECK-NEXT:      dycl.yield %[[H2]], %[[K2]] : tensor<1x4xf32>, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x4xf32>
func.func @carried(%x: tensor<1x4xf32>, %n: i64) -> tensor<1x4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r, %s = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x, %k = %c0) -> (tensor<1x4xf32>, i64) {
    %h2 = dycl.call_module "block"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %k2 = dycl.call_function "_operator.add"(%k, %i) : (i64, i64) -> i64
    dycl.yield %h2, %k2 : tensor<1x4xf32>, i64
  }
  dycl.return %r : tensor<1x4xf32>
}

// A !dycl.any slot takes an init of any type; no iter_args prints no `->`.
// CHECK-LABEL: func.func @any_slot_and_no_iter_args
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i64
// CHECK:         %[[C4:.*]] = arith.constant 4 : i64
// CHECK:         %[[C1:.*]] = arith.constant 1 : i64
// CHECK:         %[[R:.*]] = dycl.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[H:.*]] = %[[X]]) -> (!dycl.any) {
// CHECK-NEXT:      %[[N:.*]] = dycl.call_module "block"(%[[H]]) : (!dycl.any) -> !dycl.any
// CHECK-NEXT:      dycl.yield %[[N]] : !dycl.any
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.for %[[J:.*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:      %[[P:.*]] = dycl.call_method "print"(%[[X]]) : (tensor<1x4xf32>) -> !dycl.pyobj
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    } {unroll = false}
// CHECK-NEXT:    dycl.return %[[R]] : !dycl.any
func.func @any_slot_and_no_iter_args(%x: tensor<1x4xf32>) -> !dycl.any {
  %c0 = arith.constant 0 : i64
  %c4 = arith.constant 4 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (!dycl.any) {
    %n = dycl.call_module "block"(%h) : (!dycl.any) -> !dycl.any
    dycl.yield %n : !dycl.any
  }
  dycl.for %j = %c0 to %c4 step %c1 {
    %p = dycl.call_method "print"(%x) : (tensor<1x4xf32>) -> !dycl.pyobj
    dycl.yield
  } {unroll = false}
  dycl.return %r : !dycl.any
}

// A dycl.break in a nested dycl.if leaves the loop with its operands.
// CHECK-LABEL: func.func @break_out
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>, %[[N:.*]]: i64)
// CHECK:         %[[R:.*]] = dycl.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[H:.*]] = %[[X]]) -> (tensor<1x4xf32>) {
// CHECK-NEXT:      %[[M:.*]] = dycl.call_method "sum"(%[[H]]) : (tensor<1x4xf32>) -> tensor<f32>
// CHECK-NEXT:      %[[C:.*]] = dycl.to_bool %[[M]] : tensor<f32>
// CHECK-NEXT:      dycl.if %[[C]] {
// CHECK-NEXT:        dycl.break %[[H]] : tensor<1x4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        dycl.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[H2:.*]] = dycl.call_module "block"(%[[H]]) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:      dycl.yield %[[H2]] : tensor<1x4xf32>
// CHECK-NEXT:    }
func.func @break_out(%x: tensor<1x4xf32>, %n: i64) -> tensor<1x4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r = dycl.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<1x4xf32>) {
    %m = dycl.call_method "sum"(%h) : (tensor<1x4xf32>) -> tensor<f32>
    %c = dycl.to_bool %m : tensor<f32>
    dycl.if %c {
      dycl.break %h : tensor<1x4xf32>
    } else {
      dycl.yield
    }
    %h2 = dycl.call_module "block"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %h2 : tensor<1x4xf32>
  }
  dycl.return %r : tensor<1x4xf32>
}
