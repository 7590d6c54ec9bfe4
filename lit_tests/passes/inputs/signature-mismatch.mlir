// The signature says the first dimension is symbolic; the type says it is 4.
func.func @forward(%x: tensor<4x8xf32>) -> !dycl.any attributes {dycl.signature = "b x 8 x f32"} {
  dycl.return %x : tensor<4x8xf32>
}
