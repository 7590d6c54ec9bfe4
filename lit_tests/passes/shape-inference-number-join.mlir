// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `best = -1`, then `best = x[i].sum().item()` in a loop: an int on some paths, a
// float on others. The join is a Python number whose type only the run time knows
// (!dycl.pyobj), carried by the loop as such; arithmetic on it stays host work
// typed !dycl.pyobj (it sent the whole forward to Python: "result #0 of dycl.if
// has different types on the two branches: f64, i64").
// CHECK-LABEL: func.func @forward
// CHECK:         %best = dycl.for {{.*}} iter_args(%best_1 = %{{.*}}) -> (!dycl.pyobj) {
// CHECK:           %best_2 = dycl.if %{{.*}} -> (!dycl.pyobj) {
// CHECK:             dycl.yield %{{.*}} : f64
// CHECK:           } else {
// CHECK:             dycl.yield %best_1 : !dycl.pyobj
// CHECK:         %{{.*}} = dycl.call_function "_operator.add"(%best, %{{.*}}) : (!dycl.pyobj, i64) -> !dycl.pyobj
func.func @forward(%x: tensor<3x4xf32>) -> !dycl.any {
  %0 = arith.constant 0 : i64
  %1 = dycl.call_method "size"(%x, %0) : (tensor<3x4xf32>, i64) -> !dycl.any
  %2 = arith.constant -1 : i64
  %3 = arith.constant 0 : i64
  %4 = dycl.item %1 : !dycl.any -> i64
  %5 = arith.constant 1 : i64
  %best = dycl.for %i = %3 to %4 step %5 iter_args(%best_1 = %2) -> (!dycl.any) {
    %6 = dycl.call_function "_operator.getitem"(%x, %i) : (tensor<3x4xf32>, i64) -> !dycl.any
    %7 = dycl.call_method "sum"(%6) : (!dycl.any) -> !dycl.any
    %8 = arith.constant 0 : i64
    %9 = dycl.call_function "_operator.gt"(%7, %8) : (!dycl.any, i64) -> !dycl.any
    %10 = dycl.to_bool %9 : !dycl.any
    %best_2 = dycl.if %10 -> (!dycl.any) {
      %11 = dycl.call_function "_operator.getitem"(%x, %i) : (tensor<3x4xf32>, i64) -> !dycl.any
      %12 = dycl.call_method "sum"(%11) : (!dycl.any) -> !dycl.any
      %best_3 = dycl.item %12 : !dycl.any -> !dycl.any
      dycl.yield %best_3 : !dycl.any
    } else {
      dycl.yield %best_1 : !dycl.any
    }
    dycl.yield %best_2 : !dycl.any
  }
  %13 = arith.constant 1 : i64
  %14 = dycl.call_function "_operator.add"(%x, %13) : (tensor<3x4xf32>, i64) -> !dycl.any
  %15 = arith.constant 1 : i64
  %16 = dycl.call_function "_operator.add"(%best, %15) : (!dycl.any, i64) -> !dycl.any
  %17 = dycl.make_tuple(%14, %16) : (!dycl.any, !dycl.any) -> !dycl.any
  dycl.return %17 : !dycl.any
}
