// RUN: dycl-opt %s | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// A host check: the failing path raises as eager does; the return after it is
// unreachable and returns nothing.

// CHECK-LABEL: func.func @forward
// CHECK:         dycl.if %{{.*}} {
// CHECK-NEXT:      %[[MSG:.*]] = dycl.constant "too big"
// CHECK-NEXT:      dycl.raise "builtins.ValueError"(%[[MSG]]) : !dycl.pyobj
// CHECK-NEXT:      dycl.return
// CHECK:         dycl.raise "builtins.AssertionError"()
// CHECK-NOT:     :
// CHECK-NEXT:    dycl.return
// With a message: one text, each {} the Python text of the next operand.
// CHECK:         dycl.raise "builtins.IndexError"(%i, %n) {message = "index {} is out of bounds for dimension 0 with size {}"} : i64, i64
func.func @forward(%x: tensor<1x4xf32>, %c: i1, %d: i1) -> tensor<1x4xf32> {
  dycl.if %c {
    %msg = dycl.constant "too big" : !dycl.pyobj
    dycl.raise "builtins.ValueError"(%msg) : !dycl.pyobj
    dycl.return
  } else {
    dycl.yield
  }
  dycl.if %d {
    dycl.yield
  } else {
    dycl.raise "builtins.AssertionError"()
    dycl.return
  }
  dycl.if %d {
    dycl.yield
  } else {
    %i = arith.constant 7 : i64
    %n = arith.constant 5 : i64
    dycl.raise "builtins.IndexError"(%i, %n) {message = "index {} is out of bounds for dimension 0 with size {}"} : i64, i64
    dycl.return
  }
  dycl.return %x : tensor<1x4xf32>
}
