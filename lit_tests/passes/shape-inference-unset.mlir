// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `for j in range(x.size(0)): if x[j].sum() > 0: return x[j] * 2` in a helper: the
// frontend keeps the return's value in a slot (`(x[j] * 2,)`, None on entry,
// marked dycl.unset: no path reads it before a return sets it). The loop carries
// it as a Python object that stands for what is stored in it, so the item read
// where the return ran is typed as the tensor (the None entry made the loop's
// carried value change type, and the whole helper ran as Python).
// CHECK-LABEL: func.func @forward
// CHECK:         %[[SLOT:.*]] = dycl.constant none {dycl.unset} : !dycl.pyobj
// CHECK:         %__dycl_ret, %__dycl_returned = dycl.for {{.*}} iter_args(%__dycl_ret_1 = %[[SLOT]], {{.*}}) -> (!dycl.pyobj, i1) {
// CHECK:           dycl.break %{{.*}}, %{{.*}} : tuple<tensor<4xf32>>, i1
// CHECK:         %{{.*}} = dycl.call_function "_operator.getitem"(%__dycl_ret, %{{.*}}) : (!dycl.pyobj, i64) -> tensor<4xf32>
// CHECK:         dycl.return %{{.*}} : tensor<4xf32>
func.func @forward(%x: tensor<3x4xf32>) -> !dycl.any {
  %0 = arith.constant 0 : i64
  %1 = dycl.call_method "size"(%x, %0) : (tensor<3x4xf32>, i64) -> !dycl.any
  %2 = dycl.constant none {dycl.unset} : !dycl.pyobj
  %3 = arith.constant false
  %4 = arith.constant 0 : i64
  %5 = dycl.item %1 : !dycl.any -> i64
  %6 = arith.constant 1 : i64
  %__dycl_ret, %__dycl_returned = dycl.for %j = %4 to %5 step %6 iter_args(%__dycl_ret_1 = %2, %__dycl_returned_1 = %3) -> (!dycl.any, !dycl.any) {
    %7 = dycl.call_function "_operator.getitem"(%x, %j) : (tensor<3x4xf32>, i64) -> !dycl.any
    %8 = dycl.call_method "sum"(%7) : (!dycl.any) -> !dycl.any
    %9 = arith.constant 0 : i64
    %10 = dycl.call_function "_operator.gt"(%8, %9) : (!dycl.any, i64) -> !dycl.any
    %11 = dycl.to_bool %10 : !dycl.any
    dycl.if %11 {
      %12 = dycl.call_function "_operator.getitem"(%x, %j) : (tensor<3x4xf32>, i64) -> !dycl.any
      %13 = arith.constant 2 : i64
      %14 = dycl.call_function "_operator.mul"(%12, %13) : (!dycl.any, i64) -> !dycl.any
      %15 = dycl.make_tuple(%14) : (!dycl.any) -> !dycl.any
      %16 = arith.constant true
      dycl.break %15, %16 : !dycl.any, i1
    } else {
      dycl.yield
    }
    dycl.yield %__dycl_ret_1, %__dycl_returned_1 : !dycl.any, !dycl.any
  }
  %17 = dycl.to_bool %__dycl_returned : !dycl.any
  %18 = dycl.if %17 -> (!dycl.any) {
    %19 = arith.constant 0 : i64
    %20 = dycl.call_function "_operator.getitem"(%__dycl_ret, %19) : (!dycl.any, i64) -> !dycl.any
    dycl.yield %20 : !dycl.any
  } else {
    %21 = arith.constant 0 : i64
    %22 = dycl.call_function "_operator.getitem"(%x, %21) : (tensor<3x4xf32>, i64) -> !dycl.any
    %23 = arith.constant 0 : i64
    %24 = dycl.call_function "_operator.mul"(%22, %23) : (!dycl.any, i64) -> !dycl.any
    dycl.yield %24 : !dycl.any
  }
  %25 = arith.constant 1 : i64
  %26 = dycl.call_function "_operator.add"(%18, %25) : (!dycl.any, i64) -> !dycl.any
  dycl.return %26 : !dycl.any
}
