// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// `for x0, x1 in boxes.tolist(): crop = img[:, x0:x1]`: the elements of a tensor's
// list are Python ints only the run reads (i64), so the crop's width is a dynamic
// dimension. As Python objects (!dycl.pyobj) they could not enter a sub-DNN: the
// slice ran as a region typed by one crop's width, and raised for other widths.
// CHECK:         %x0 = dycl.get_item %{{.*}}[0 : i64] : !dycl.pyobj -> i64
// CHECK-NEXT:    %x1 = dycl.get_item %{{.*}}[1 : i64] : !dycl.pyobj -> i64
// CHECK:         %crop = dycl.call_function "_operator.getitem"(%img, %{{.*}}) {dycl.data_dependent_shape} : (tensor<2x6xf32>, !dycl.pyobj) -> tensor<2x?xf32>
func.func @forward(%img: tensor<2x6xf32>, %boxes: tensor<2x2xi64>) -> !dycl.list<!dycl.any> {
  %0 = dycl.call_method "tolist"(%boxes) : (tensor<2x2xi64>) -> !dycl.any
  %n = dycl.call_function "builtins.len"(%0) : (!dycl.any) -> !dycl.any
  %out = dycl.make_list() : () -> !dycl.list<!dycl.any>
  %lo = arith.constant 0 : i64
  %hi = dycl.item %n : !dycl.any -> i64
  %step = arith.constant 1 : i64
  %res = dycl.for %i = %lo to %hi step %step iter_args(%acc = %out) -> (!dycl.list<!dycl.any>) {
    %2 = dycl.call_function "_operator.getitem"(%0, %i) : (!dycl.any, i64) -> !dycl.any
    %3 = arith.constant 2 : i64
    %4 = dycl.call_function "dycl.tensor_ops.unpack"(%2, %3) : (!dycl.any, i64) -> !dycl.any
    %x0 = dycl.get_item %4[0 : i64] : !dycl.any -> !dycl.any
    %x1 = dycl.get_item %4[1 : i64] : !dycl.any -> !dycl.any
    %5 = dycl.constant none : !dycl.pyobj
    %6 = dycl.call_function "builtins.slice"(%x0, %x1, %5) : (!dycl.any, !dycl.any, !dycl.pyobj) -> !dycl.any
    %7 = dycl.call_function "builtins.slice"(%5, %5, %5) : (!dycl.pyobj, !dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
    %8 = dycl.make_tuple(%7, %6) : (!dycl.pyobj, !dycl.any) -> !dycl.any
    %crop = dycl.call_function "_operator.getitem"(%img, %8) : (tensor<2x6xf32>, !dycl.any) -> !dycl.any
    %9 = dycl.call_method "mean"(%crop) : (!dycl.any) -> !dycl.any
    %10 = dycl.list_append %acc, %9 : !dycl.list<!dycl.any>, !dycl.any -> !dycl.list<!dycl.any>
    dycl.yield %10 : !dycl.list<!dycl.any>
  }
  func.return %res : !dycl.list<!dycl.any>
}
