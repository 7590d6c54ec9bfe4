// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// Complex tensors (an STFT, rotary embeddings as `torch.polar`) are typed like any
// other: complex<f32> for torch.complex64, complex<f64> for torch.complex128.
// CHECK-LABEL: func.func @forward
// CHECK:         %c = dycl.call_function "torch.view_as_complex"(%x) : (tensor<4x2xf32>) -> tensor<4xcomplex<f32>>
// CHECK-NEXT:    %d = dycl.call_method "double"(%x) : (tensor<4x2xf32>) -> tensor<4x2xf64>
// CHECK-NEXT:    %w = dycl.call_function "torch.view_as_complex"(%d) : (tensor<4x2xf64>) -> tensor<4xcomplex<f64>>
// CHECK-NEXT:    %a = dycl.call_method "abs"(%c) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
func.func @forward(%x: tensor<4x2xf32>) -> !dycl.any {
  %c = dycl.call_function "torch.view_as_complex"(%x) : (tensor<4x2xf32>) -> !dycl.any
  %d = dycl.call_method "double"(%x) : (tensor<4x2xf32>) -> !dycl.any
  %w = dycl.call_function "torch.view_as_complex"(%d) : (!dycl.any) -> !dycl.any
  %a = dycl.call_method "abs"(%c) : (!dycl.any) -> !dycl.any
  %t = dycl.make_tuple(%a, %w) : (!dycl.any, !dycl.any) -> !dycl.any
  func.return %t : !dycl.any
}
