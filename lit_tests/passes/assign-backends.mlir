// RUN: dycl-opt %s -p extract-hcfg,outline-subgraphs,"assign-backends{backend=onnxruntime}" | filecheck %s
// RUN: not dycl-opt %s -p extract-hcfg,outline-subgraphs,"assign-backends{backend=nope}" 2>&1 | filecheck %s --check-prefix=BAD

// policy=fixed (the default) gives every sub-DNN the named backend; the host
// function gets none. An unknown backend is a usage error naming the choices.

// CHECK:       func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
// CHECK:       func.func @sub_0({{.*}}) -> tensor<i1> attributes {dycl.subgraph, dycl.backend = "onnxruntime"}
// CHECK:       func.func @sub_1({{.*}}) -> tensor<1x4xf32> attributes {dycl.subgraph, dycl.backend = "onnxruntime"}

// BAD: unknown backend 'nope'
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = dycl.call_method "sum"(%x) : (tensor<1x4xf32>) -> tensor<f32>
  %zero = arith.constant 0 : i64
  %pos = dycl.call_function "_operator.gt"(%s, %zero) : (tensor<f32>, i64) -> tensor<i1>
  %c = dycl.to_bool %pos : tensor<i1>
  %r = dycl.if %c -> (tensor<1x4xf32>) {
    %t = dycl.call_function "torch.tanh"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %t : tensor<1x4xf32>
  } else {
    dycl.yield %x : tensor<1x4xf32>
  }
  dycl.return %r : tensor<1x4xf32>
}
