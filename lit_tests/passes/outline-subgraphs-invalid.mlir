// RUN: not dycl-opt %s -p outline-subgraphs 2>&1 | filecheck %s

// Tensor compute outside any dycl.tensor_region (extract-hcfg did not run):
// outline-subgraphs checks its guarantee and reports the op's location.
// CHECK: outline-subgraphs-invalid.mlir:[[# @LINE + 2]]:3: error: host function @forward still computes on tensors ('dycl.call_module')
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dycl.call_module "fc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}
