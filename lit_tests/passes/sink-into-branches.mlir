// RUN: dycl-opt %s -p sink-into-branches | filecheck %s
// RUN: dycl-opt %s -p sink-into-branches | dycl-opt | filecheck %s
// RUN: dycl-opt %s -p sink-into-branches,extract-hcfg | filecheck %s --check-prefix=HCFG

// The tensor work after a join (the head) and what only it uses before the
// branch (the gate probability) are copied into each branch that ends with
// tensor work, so each path is one region after the predicate instead of three.
// CHECK-LABEL: func.func @route
// CHECK:         %c = dycl.to_bool %pos
// CHECK-NEXT:    %[[R:.*]] = dycl.if %c -> (tensor<1x4xf32>) {
// CHECK-NEXT:      %y = dycl.call_function "torch.relu"(%h)
// CHECK-NEXT:      %[[P1:.*]] = dycl.call_method "sigmoid"(%s)
// CHECK-NEXT:      %[[O1:.*]] = dycl.call_function "_operator.mul"(%y, %[[P1]])
// CHECK-NEXT:      dycl.yield %[[O1]] : tensor<1x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %z = dycl.call_function "torch.tanh"(%h)
// CHECK-NEXT:      %[[P2:.*]] = dycl.call_method "sigmoid"(%s)
// CHECK-NEXT:      %[[O2:.*]] = dycl.call_function "_operator.mul"(%z, %[[P2]])
// CHECK-NEXT:      dycl.yield %[[O2]] : tensor<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<1x4xf32>

// HCFG-LABEL: func.func @route
// HCFG-COUNT-3: dycl.tensor_region
// HCFG-NOT:     dycl.tensor_region
func.func @route(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %h = dycl.call_function "torch.tanh"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %s = dycl.call_method "sum"(%h) : (tensor<1x4xf32>) -> tensor<f32>
  %zero = arith.constant 0 : i64
  %pos = dycl.call_function "_operator.gt"(%s, %zero) : (tensor<f32>, i64) -> tensor<i1>
  %p = dycl.call_method "sigmoid"(%s) : (tensor<f32>) -> tensor<f32>
  %c = dycl.to_bool %pos : tensor<i1>
  %r = dycl.if %c -> (tensor<1x4xf32>) {
    %y = dycl.call_function "torch.relu"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %y : tensor<1x4xf32>
  } else {
    %z = dycl.call_function "torch.tanh"(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %z : tensor<1x4xf32>
  }
  %o = dycl.call_function "_operator.mul"(%r, %p) : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  dycl.return %o : tensor<1x4xf32>
}

// No branch that falls through ends with tensor work (one returns, one
// forwards its input): copying would save no call, so nothing moves.
// CHECK-LABEL: func.func @no_gain
// HCFG-LABEL: func.func @no_gain
// CHECK:         %r = dycl.if %c -> (tensor<1x4xf32>) {
// CHECK-NEXT:      dycl.return %x : tensor<1x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %x : tensor<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %o = dycl.call_function "torch.relu"(%r)
func.func @no_gain(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = dycl.call_method "sum"(%x) : (tensor<1x4xf32>) -> tensor<f32>
  %zero = arith.constant 0 : i64
  %pos = dycl.call_function "_operator.gt"(%s, %zero) : (tensor<f32>, i64) -> tensor<i1>
  %c = dycl.to_bool %pos : tensor<i1>
  %r = dycl.if %c -> (tensor<1x4xf32>) {
    dycl.return %x : tensor<1x4xf32>
  } else {
    dycl.yield %x : tensor<1x4xf32>
  }
  %o = dycl.call_function "torch.relu"(%r) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  dycl.return %o : tensor<1x4xf32>
}

// A random draw before the branch keeps its place (moving it would reorder the
// generator's draws against the branch's own); the tail after the join moves.
// CHECK-LABEL: func.func @random_stays
// CHECK:         %n = dycl.call_function "torch.randn_like"(%x)
// CHECK-NEXT:    %c = dycl.to_bool %pos
// CHECK-NEXT:    %[[R:.*]] = dycl.if %c -> (tensor<1x4xf32>) {
// CHECK-NEXT:      %y = dycl.call_function "torch.rand_like"(%x)
// CHECK-NEXT:      %[[O:.*]] = dycl.call_function "_operator.add"(%y, %n)
// CHECK-NEXT:      dycl.yield %[[O]] : tensor<1x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.return %x : tensor<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]]
func.func @random_stays(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = dycl.call_method "sum"(%x) : (tensor<1x4xf32>) -> tensor<f32>
  %zero = arith.constant 0 : i64
  %pos = dycl.call_function "_operator.gt"(%s, %zero) : (tensor<f32>, i64) -> tensor<i1>
  %n = dycl.call_function "torch.randn_like"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = dycl.to_bool %pos : tensor<i1>
  %r = dycl.if %c -> (tensor<1x4xf32>) {
    %y = dycl.call_function "torch.rand_like"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    dycl.yield %y : tensor<1x4xf32>
  } else {
    dycl.return %x : tensor<1x4xf32>
  }
  %o = dycl.call_function "_operator.add"(%r, %n) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  dycl.return %o : tensor<1x4xf32>
}
