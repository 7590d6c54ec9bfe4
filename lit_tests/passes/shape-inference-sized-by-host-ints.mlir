// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// A tensor whose sizes follow a host int (`torch.arange(n)`, `x.narrow(0, 0, n)`)
// has dynamic dimensions there and is made by the host with torch (`dycl.on_host`:
// no sub-DNN takes a size from a number); a 0-d integer tensor as a slice bound
// (`best[:hlens[b]]`) is read as an int first, as `__index__` reads it in eager.
// CHECK-LABEL: func.func @forward
// CHECK:         %n = dycl.item %s : tensor<i64> -> i64
// CHECK-NEXT:    %r = dycl.call_function "torch.arange"(%n) {dycl.on_host, dycl.data_dependent_shape} : (i64) -> tensor<?xi64>
// CHECK-NEXT:    %c = dycl.call_method "narrow"(%x, %zero, %zero, %n) {dycl.on_host, dycl.data_dependent_shape} : (tensor<5x3xf32>, i64, i64, i64) -> tensor<?x3xf32>
// CHECK-NEXT:    %m = dycl.call_method "amax"(%c) : (tensor<?x3xf32>) -> tensor<f32>
// CHECK:         %[[B:.*]] = dycl.item %b : tensor<i64> -> i64
// CHECK-NEXT:    %sl = dycl.call_function "builtins.slice"(%none, %[[B]], %none) : (!dycl.pyobj, i64, !dycl.pyobj) -> !dycl.pyobj
// CHECK-NEXT:    %cut = dycl.call_function "_operator.getitem"(%x, %sl) {dycl.data_dependent_shape} : (tensor<5x3xf32>, !dycl.pyobj) -> tensor<?x3xf32>
func.func @forward(%x: tensor<5x3xf32>, %s: tensor<i64>, %b: tensor<i64>) -> !dycl.any {
  %zero = arith.constant 0 : i64
  %none = dycl.constant none : !dycl.pyobj
  %n = dycl.item %s : tensor<i64> -> !dycl.any
  %r = dycl.call_function "torch.arange"(%n) : (!dycl.any) -> !dycl.any
  %c = dycl.call_method "narrow"(%x, %zero, %zero, %n) : (tensor<5x3xf32>, i64, i64, !dycl.any) -> !dycl.any
  %m = dycl.call_method "amax"(%c) : (!dycl.any) -> !dycl.any
  %sl = dycl.call_function "builtins.slice"(%none, %b, %none) : (!dycl.pyobj, tensor<i64>, !dycl.pyobj) -> !dycl.pyobj
  %cut = dycl.call_function "_operator.getitem"(%x, %sl) : (tensor<5x3xf32>, !dycl.pyobj) -> !dycl.any
  %t = dycl.make_tuple(%r, %m, %cut) : (!dycl.any, !dycl.any, !dycl.any) -> !dycl.any
  func.return %t : !dycl.any
}
