// RUN: dycl-opt %s -p sink-state-stores | filecheck %s

// A store that the next one overwrites before any host op could look (the same
// attribute, stored the same way) is dropped: `self.ema.mul_(m).add_(x)` stores
// the module's tensor once. Stores of another attribute, stored another way (in
// place, then replaced), or with a check between that may raise, all stay.

// CHECK-LABEL: func.func @forward
// CHECK:         %p = dycl.call_function "_operator.gt"
// CHECK-NEXT:    dycl.set_attr "" "h"(%a) {in_place}
// CHECK-NEXT:    dycl.set_attr "" "ema"(%b) {in_place}
// CHECK-NEXT:    dycl.set_attr "" "h"(%b) :
// CHECK-NEXT:    dycl.set_attr "" "n"(%a) {in_place}
// CHECK-NEXT:    %c = dycl.to_bool
// CHECK-NEXT:    dycl.if %c
// CHECK:         } {dycl.bounds_check}
// CHECK-NEXT:    dycl.set_attr "" "n"(%b) {in_place}
// CHECK-NEXT:    dycl.return
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = dycl.call_function "torch.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.set_attr "" "ema"(%a) {in_place} : tensor<4xf32>
  dycl.set_attr "" "h"(%a) {in_place} : tensor<4xf32>
  %b = dycl.call_function "torch.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.set_attr "" "ema"(%b) {in_place} : tensor<4xf32>
  dycl.set_attr "" "h"(%b) : tensor<4xf32>
  dycl.set_attr "" "n"(%a) {in_place} : tensor<4xf32>
  %s = dycl.call_method "sum"(%b) : (tensor<4xf32>) -> tensor<f32>
  %zero = arith.constant 0 : i64
  %p = dycl.call_function "_operator.gt"(%s, %zero) : (tensor<f32>, i64) -> tensor<i1>
  %c = dycl.to_bool %p : tensor<i1>
  dycl.if %c {
    dycl.yield
  } else {
    %m = dycl.constant "index out of range" : !dycl.pyobj
    dycl.raise "builtins.IndexError"(%m) : !dycl.pyobj
    dycl.yield
  } {dycl.bounds_check}
  dycl.set_attr "" "n"(%b) {in_place} : tensor<4xf32>
  dycl.return %b : tensor<4xf32>
}
