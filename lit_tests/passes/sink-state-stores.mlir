// RUN: dycl-opt %s -p sink-state-stores | filecheck %s
// RUN: dycl-opt %s -p sink-state-stores,extract-hcfg | filecheck %s --check-prefix=HCFG

// Module-state stores wait for the next host operation of their block, in their
// order, so the tensor work around them stays one region; stores inside a
// branch stay in that branch.

// CHECK-LABEL: func.func @forward
// CHECK:         %h = dycl.call_function "torch.tanh"(%x)
// CHECK-NEXT:    %s = dycl.call_method "sum"(%h)
// CHECK:         %pos = dycl.call_function "_operator.gt"
// CHECK-NEXT:    dycl.set_attr "" "hidden"(%h)
// CHECK-NEXT:    dycl.set_attr "dec" "steps"(%one)
// CHECK-NEXT:    %c = dycl.to_bool %pos
// CHECK:         dycl.if
// CHECK-NEXT:      %t = dycl.call_function "torch.sigmoid"(%h)
// CHECK-NEXT:      %u = dycl.call_function "torch.relu"(%t)
// CHECK-NEXT:      dycl.set_attr "" "hidden"(%t)
// CHECK-NEXT:      dycl.yield %u

// HCFG:         %h, %pos = dycl.tensor_region
// HCFG-NOT:     dycl.set_attr
// HCFG:         dycl.yield
// HCFG-NEXT:    }
// HCFG-NEXT:    dycl.set_attr "" "hidden"(%h)
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %one = arith.constant 1 : i64
  %h = dycl.call_function "torch.tanh"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  dycl.set_attr "" "hidden"(%h) : tensor<1x4xf32>
  %s = dycl.call_method "sum"(%h) : (tensor<1x4xf32>) -> tensor<f32>
  dycl.set_attr "dec" "steps"(%one) : i64
  %zero = arith.constant 0 : i64
  %pos = dycl.call_function "_operator.gt"(%s, %zero) : (tensor<f32>, i64) -> tensor<i1>
  %c = dycl.to_bool %pos : tensor<i1>
  %r = dycl.if %c -> (tensor<1x4xf32>) {
    %t = dycl.call_function "torch.sigmoid"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.set_attr "" "hidden"(%t) : tensor<1x4xf32>
    %u = dycl.call_function "torch.relu"(%t) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %u : tensor<1x4xf32>
  } else {
    dycl.yield %h : tensor<1x4xf32>
  }
  dycl.return %r : tensor<1x4xf32>
}
