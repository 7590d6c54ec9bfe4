// RUN: dycl-opt %s | dycl-opt | filecheck %s
// RUN: dycl-opt %s --print-op-generic | dycl-opt | filecheck %s

// The three FX-style call ops: call_module, call_function, call_method.

// CHECK-LABEL: func.func @call_module
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3x8x8xf32>)
// CHECK:         %[[Y:.*]] = dycl.call_module "layer1.0.conv1"(%[[X]]) : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x8xf32>
// CHECK:         %[[Z:.*]] = dycl.call_module "fc"(%[[Y]]) : (tensor<1x8x8x8xf32>) -> !dycl.any
// CHECK:         dycl.return %[[Z]] : !dycl.any
func.func @call_module(%x: tensor<1x3x8x8xf32>) -> !dycl.any {
  %y = dycl.call_module "layer1.0.conv1"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x8xf32>
  %z = dycl.call_module "fc"(%y) : (tensor<1x8x8x8xf32>) -> !dycl.any
  dycl.return %z : !dycl.any
}

// CHECK-LABEL: func.func @call_function
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[C1:.*]] = arith.constant 1 : i64
// CHECK:         %[[R:.*]] = dycl.call_function "torch.relu"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[S:.*]] = dycl.call_function "torch.sum"(%[[R]], %[[C1]]) {kwargs = ["dim"]} : (tensor<2x3xf32>, i64) -> tensor<2xf32>
// CHECK:         %[[N:.*]] = dycl.call_function "torch.nn.functional.normalize"(%[[S]]) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:         %[[A:.*]] = dycl.call_function "_operator.add"(%[[C1]], %[[C1]]) : (i64, i64) -> i64
// CHECK:         dycl.return %[[N]] : tensor<2xf32>
func.func @call_function(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %c1 = arith.constant 1 : i64
  %r = dycl.call_function "torch.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = dycl.call_function "torch.sum"(%r, %c1) {kwargs = ["dim"]} : (tensor<2x3xf32>, i64) -> tensor<2xf32>
  %n = dycl.call_function "torch.nn.functional.normalize"(%s) : (tensor<2xf32>) -> tensor<2xf32>
  %a = dycl.call_function "_operator.add"(%c1, %c1) : (i64, i64) -> i64
  dycl.return %n : tensor<2xf32>
}

// CHECK-LABEL: func.func @call_method
// CHECK-SAME:    (%[[H:.*]]: tensor<1x4xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : i64
// CHECK:         %[[M:.*]] = dycl.call_method "mean"(%[[H]]) : (tensor<1x4xf32>) -> tensor<f32>
// CHECK:         %[[SZ:.*]] = dycl.call_method "size"(%[[H]], %[[C0]]) : (tensor<1x4xf32>, i64) -> i64
// CHECK:         %[[V:.*]] = dycl.call_method "view"(%[[H]], %[[SZ]], %[[C0]]) {kwargs = ["dim"]} : (tensor<1x4xf32>, i64, i64) -> !dycl.any
// CHECK:         dycl.return %[[M]] : tensor<f32>
func.func @call_method(%h: tensor<1x4xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : i64
  %m = dycl.call_method "mean"(%h) : (tensor<1x4xf32>) -> tensor<f32>
  %sz = dycl.call_method "size"(%h, %c0) : (tensor<1x4xf32>, i64) -> i64
  %v = dycl.call_method "view"(%h, %sz, %c0) {kwargs = ["dim"]} : (tensor<1x4xf32>, i64, i64) -> !dycl.any
  dycl.return %m : tensor<f32>
}

// Keyword arguments may name every operand of call_module/call_function.
// CHECK-LABEL: func.func @all_keywords
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         dycl.call_function "torch.relu"(%[[X]]) {kwargs = ["input"]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         dycl.call_module "head"(%[[X]]) {kwargs = ["x"]} : (tensor<4xf32>) -> tensor<4xf32>
func.func @all_keywords(%x: tensor<4xf32>) {
  %r = dycl.call_function "torch.relu"(%x) {kwargs = ["input"]} : (tensor<4xf32>) -> tensor<4xf32>
  %m = dycl.call_module "head"(%x) {kwargs = ["x"]} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
