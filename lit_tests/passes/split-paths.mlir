// RUN: dycl-opt %s -p split-paths | filecheck %s
// RUN: dycl-opt %s -p split-paths | dycl-opt | filecheck %s

// `h` is 8 wide on one path and 4 wide on the other: no single type joins them.
// Splitting copies the code after the if into each branch, so each path has its
// own `sum` of its own `h` (shape-inference does the same to the branches whose
// join it finds differing).
// CHECK-LABEL: func.func @forward
// CHECK:         dycl.if %c {
// CHECK-NEXT:      %a = dycl.call_function "torch.cat"(%t) : (!dycl.pyobj) -> tensor<8xf32>
// CHECK-NEXT:      %[[S1:.*]] = dycl.call_method "sum"(%a) : (tensor<8xf32>) -> tensor<f32>
// CHECK-NEXT:      dycl.return %[[S1]] : tensor<f32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S2:.*]] = dycl.call_method "sum"(%x) : (tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT:    dycl.return %[[S2]] : tensor<f32>
// CHECK-NOT:     dycl.split_paths
func.func @forward(%x: tensor<4xf32>, %c: i1) -> tensor<f32> {
  %t = dycl.make_tuple(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> !dycl.pyobj
  %h = dycl.if %c -> (!dycl.any) {
    %a = dycl.call_function "torch.cat"(%t) : (!dycl.pyobj) -> tensor<8xf32>
    dycl.yield %a : tensor<8xf32>
  } else {
    dycl.yield %x : tensor<4xf32>
  } {dycl.split_paths}
  %s = dycl.call_method "sum"(%h) : (!dycl.any) -> tensor<f32>
  dycl.return %s : tensor<f32>
}
