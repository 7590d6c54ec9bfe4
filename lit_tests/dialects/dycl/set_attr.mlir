// RUN: dycl-opt %s | dycl-opt | filecheck %s

// dycl.set_attr round-trips: a store into the model itself (empty path) and into
// a submodule, of a tensor, a host integer and a Python object.

// CHECK-LABEL: func.func @forward
// CHECK-NEXT:    dycl.set_attr "" "hidden"(%x) : tensor<1x4xf32>
// CHECK-NEXT:    dycl.set_attr "decoder.layers.0" "steps"(%n) : i64
// CHECK-NEXT:    dycl.set_attr "decoder" "input_dtype"(%d) : !dycl.pyobj
func.func @forward(%x: tensor<1x4xf32>, %n: i64, %d: !dycl.pyobj) -> tensor<1x4xf32> {
  dycl.set_attr "" "hidden"(%x) : tensor<1x4xf32>
  dycl.set_attr "decoder.layers.0" "steps"(%n) : i64
  dycl.set_attr "decoder" "input_dtype"(%d) : !dycl.pyobj
  dycl.return %x : tensor<1x4xf32>
}
