// RUN: dycl-opt %s | dycl-opt | filecheck %s

// dycl.get_attr round-trips: module state read on the host (a number, a tensor read
// as a copy), and the in-place store that writes the module's own tensor.

// CHECK-LABEL: func.func @forward
// CHECK-NEXT:    %n = dycl.get_attr "" "steps" : i64
// CHECK-NEXT:    %c = dycl.get_attr "norm.0" "count" {copy} : tensor<4xf32>
// CHECK-NEXT:    %f = dycl.get_attr "decoder" "temperature" : f64
// CHECK-NEXT:    dycl.set_attr "norm.0" "count"(%c) {in_place} : tensor<4xf32>
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %n = dycl.get_attr "" "steps" : i64
  %c = dycl.get_attr "norm.0" "count" {copy} : tensor<4xf32>
  %f = dycl.get_attr "decoder" "temperature" : f64
  dycl.set_attr "norm.0" "count"(%c) {in_place} : tensor<4xf32>
  dycl.return %x : tensor<1x4xf32>
}
