// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// dycl.param (model parameters/buffers) and dycl.constant (tensor and Python literals).

// CHECK-LABEL: func.func @params
// CHECK:         %[[W:.*]] = dycl.param "fc.weight" : tensor<10x64xf32>
// CHECK:         %[[B:.*]] = dycl.param "layer1.0.bn.running_mean" : tensor<64xf32>
// CHECK:         %[[U:.*]] = dycl.param "fc.bias" : !dycl.any
// CHECK:         %[[S:.*]] = dycl.param "scale" : tensor<*xf32>
// CHECK:         dycl.return %[[W]], %[[U]] : tensor<10x64xf32>, !dycl.any
func.func @params() -> (tensor<10x64xf32>, !dycl.any) {
  %w = dycl.param "fc.weight" : tensor<10x64xf32>
  %b = dycl.param "layer1.0.bn.running_mean" : tensor<64xf32>
  %u = dycl.param "fc.bias" : !dycl.any
  %s = dycl.param "scale" : tensor<*xf32>
  dycl.return %w, %u : tensor<10x64xf32>, !dycl.any
}

// A dense value carries its own type: the custom form prints no `: type`.
// CHECK-LABEL: func.func @tensor_constants
// CHECK:         %[[T:.*]] = dycl.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>{{$}}
// CHECK:         %[[I:.*]] = dycl.constant dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>{{$}}
// CHECK:         %[[Z:.*]] = dycl.constant dense<0.000000e+00> : tensor<f32>{{$}}
// CHECK:         dycl.return %[[T]] : tensor<2xf32>
func.func @tensor_constants() -> tensor<2xf32> {
  %t = dycl.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = dycl.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %z = dycl.constant dense<0.0> : tensor<f32>
  dycl.return %t : tensor<2xf32>
}

// CHECK-LABEL: func.func @pyobj_constants
// CHECK:         %[[N:.*]] = dycl.constant none : !dycl.pyobj
// CHECK:         %[[S:.*]] = dycl.constant "bilinear" : !dycl.pyobj
// CHECK:         %[[G:.*]] = dycl.constant #dycl.global<"torch.float32"> : !dycl.pyobj
// CHECK:         %[[A:.*]] = dycl.constant [1 : i64, 2.500000e+00 : f64, "x", none, #dycl.global<"torch.int64">] : !dycl.pyobj
// CHECK:         %[[E:.*]] = dycl.constant [] : !dycl.pyobj
// CHECK:         %[[NN:.*]] = dycl.constant {{\[\[}}1 : i64, 2 : i64], [3 : i64]] : !dycl.pyobj
// CHECK:         %[[D:.*]] = dycl.constant "x" {note = "kept"} : !dycl.pyobj
// CHECK:         dycl.return %[[N]], %[[G]] : !dycl.pyobj, !dycl.pyobj
func.func @pyobj_constants() -> (!dycl.pyobj, !dycl.pyobj) {
  %n = dycl.constant none : !dycl.pyobj
  %s = dycl.constant "bilinear" : !dycl.pyobj
  %g = dycl.constant #dycl.global<"torch.float32"> : !dycl.pyobj
  %a = dycl.constant [1 : i64, 2.5 : f64, "x", none, #dycl.global<"torch.int64">] : !dycl.pyobj
  %e = dycl.constant [] : !dycl.pyobj
  %nn = dycl.constant [[1 : i64, 2 : i64], [3 : i64]] : !dycl.pyobj
  %d = dycl.constant "x" {note = "kept"} : !dycl.pyobj
  dycl.return %n, %g : !dycl.pyobj, !dycl.pyobj
}
