// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `y` is bound only by iterations of a while loop that may run none, then read:
// the loop carries it from the unbound marker. On the path where the loop ran no
// iteration (the first iteration peeled, paths split) the read's check raises
// eager's UnboundLocalError and nothing after it runs: a dycl.raise with Python's
// own message ends that path (it could not be typed: the whole return ran as Python).
// CHECK-LABEL: func.func @forward
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}} = dycl.while ({{.*}}) -> (i64, tensor<3x4xf32>, tensor<3x4xf32>) cond {
// CHECK:         dycl.return %{{.*}} : tensor<3x4xf32>
// CHECK:         %[[MSG:.*]] = dycl.constant "cannot access local variable 'y' where it is not associated with a value"
// CHECK-NEXT:    dycl.raise "builtins.UnboundLocalError"(%[[MSG]]) : !dycl.pyobj
// CHECK-NEXT:    dycl.return
// CHECK-NOT:     dycl.py_region
func.func @forward(%x: tensor<3x4xf32>) -> !dycl.any {
  %0 = dycl.constant #dycl.global<"dycl.pyregion.UNBOUND"> : !dycl.pyobj
  %1 = arith.constant 0 : i64
  %k, %x_1, %y = dycl.while (%k_1 = %1, %x_2 = %x, %y_1 = %0) -> (!dycl.any, !dycl.any, !dycl.any) cond {
    %2 = dycl.call_method "sum"(%x_2) : (!dycl.any) -> !dycl.any
    %3 = arith.constant 0 : i64
    %4 = dycl.call_function "_operator.gt"(%2, %3) : (!dycl.any, i64) -> !dycl.any
    %5 = dycl.to_bool %4 : !dycl.any
    %6 = dycl.if %5 -> (i1) {
      %7 = arith.constant 4 : i64
      %8 = dycl.call_function "_operator.lt"(%k_1, %7) : (!dycl.any, i64) -> !dycl.any
      %9 = dycl.to_bool %8 : !dycl.any
      dycl.yield %9 : i1
    } else {
      %10 = arith.constant false
      dycl.yield %10 : i1
    }
    dycl.condition %6
  } do {
  ^bb0(%k_2: !dycl.any, %x_3: !dycl.any, %y_2: !dycl.any):
    %11 = arith.constant 2 : i64
    %y_3 = dycl.call_function "_operator.mul"(%x_3, %11) : (!dycl.any, i64) -> !dycl.any
    %12 = arith.constant 1 : i64
    %x_4 = dycl.call_function "_operator.sub"(%x_3, %12) : (!dycl.any, i64) -> !dycl.any
    %13 = arith.constant 1 : i64
    %14 = dycl.call_function "_operator.add"(%k_2, %13) : (!dycl.any, i64) -> !dycl.any
    %k_3 = dycl.call_function "dycl.tensor_ops.inplace_result"(%14, %k_2) : (!dycl.any, !dycl.any) -> !dycl.any
    dycl.yield %k_3, %x_4, %y_3 : !dycl.any, !dycl.any, !dycl.any
  }
  %y_4 = dycl.py_region(%y) {code = "def __dycl_region(__dycl_root, y):\0A    __dycl_unbound = __import__('dycl.pyregion', fromlist=['UNBOUND']).UNBOUND\0A    if y is __dycl_unbound:\0A        del y\0A    return (y,)\0A", globals = "dycl_user_wm_7b17061358eb", loc = "wm.py:10:16", construct = "read of a name", reason = "'y' is bound on some paths of the Python before it only"} : (!dycl.any) -> !dycl.any
  %15 = arith.constant 1 : i64
  %16 = dycl.call_function "_operator.add"(%y_4, %15) : (!dycl.any, i64) -> !dycl.any
  dycl.return %16 : !dycl.any
}
