// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.tensor_region: an HCFG tensor node, with and without results.

// CHECK-LABEL: func.func @regions
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4xf32>)
// CHECK:         %[[H:.*]], %[[P:.*]] = dycl.tensor_region -> (tensor<1x4xf32>, tensor<i1>) {
// CHECK-NEXT:      %[[W:.*]] = dycl.param "fc.weight" : tensor<4x4xf32>
// CHECK-NEXT:      %[[Y:.*]] = dycl.call_function "torch.matmul"(%[[X]], %[[W]]) : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:      %[[S:.*]] = dycl.call_method "sum"(%[[Y]]) : (tensor<1x4xf32>) -> tensor<f32>
// CHECK-NEXT:      %[[Z:.*]] = dycl.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:      %[[G:.*]] = dycl.call_function "torch.gt"(%[[S]], %[[Z]]) : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:      dycl.yield %[[Y]], %[[G]] : tensor<1x4xf32>, tensor<i1>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.tensor_region {
// CHECK-NEXT:      %[[U:.*]] = dycl.call_module "log"(%[[H]]) : (tensor<1x4xf32>) -> !dycl.pyobj
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    } {hcfg.node = 1 : i64}
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[P]] : tensor<i1>
// CHECK-NEXT:    dycl.return %[[H]] : tensor<1x4xf32>
func.func @regions(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %h, %p = dycl.tensor_region -> (tensor<1x4xf32>, tensor<i1>) {
    %w = dycl.param "fc.weight" : tensor<4x4xf32>
    %y = dycl.call_function "torch.matmul"(%x, %w) : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    %s = dycl.call_method "sum"(%y) : (tensor<1x4xf32>) -> tensor<f32>
    %z = dycl.constant dense<0.0> : tensor<f32>
    %g = dycl.call_function "torch.gt"(%s, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    dycl.yield %y, %g : tensor<1x4xf32>, tensor<i1>
  }
  dycl.tensor_region {
    %u = dycl.call_module "log"(%h) : (tensor<1x4xf32>) -> !dycl.pyobj
    dycl.yield
  } {hcfg.node = 1 : i64}
  %c = dycl.to_bool %p : tensor<i1>
  dycl.return %h : tensor<1x4xf32>
}
