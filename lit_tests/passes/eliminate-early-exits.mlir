// RUN: dycl-opt %s -p eliminate-early-exits | filecheck %s
// RUN: dycl-opt %s -p eliminate-early-exits | dycl-opt | filecheck %s

// An early exit (`if s > 0: return h`) becomes a result of the branch: the code
// after the if moves into the branch that falls through, and the function
// returns once, at its end. A nested early exit is moved at each level.
// CHECK-LABEL: func.func @forward
// CHECK:         %h = dycl.call_module "fc"(%x)
// CHECK:         %[[R:.*]] = dycl.if %c -> (tensor<4xf32>) {
// CHECK-NEXT:      dycl.yield %h : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %g = dycl.call_function "torch.relu"(%h)
// CHECK-NEXT:      %[[INNER:.*]] = dycl.if %d -> (tensor<4xf32>) {
// CHECK-NEXT:        dycl.yield %g : tensor<4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %y = dycl.call_function "torch.tanh"(%g)
// CHECK-NEXT:        dycl.yield %y : tensor<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield %[[INNER]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<4xf32>
// CHECK-NOT:     dycl.return
func.func @forward(%x: tensor<4xf32>, %c: i1, %d: i1) -> tensor<4xf32> {
  %h = dycl.call_module "fc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.if %c {
    dycl.return %h : tensor<4xf32>
  } else {
    dycl.yield
  }
  %g = dycl.call_function "torch.relu"(%h) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.if %d {
    dycl.return %g : tensor<4xf32>
  } else {
    dycl.yield
  }
  %y = dycl.call_function "torch.tanh"(%g) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}
