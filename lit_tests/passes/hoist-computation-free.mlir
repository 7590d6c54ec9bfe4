// RUN: dycl-opt %s -p hoist-computation-free | filecheck %s
// RUN: dycl-opt %s -p 'hoist-computation-free{report=true}' -o %t 2>&1 | filecheck %s --check-prefix=REPORT

// REPORT: hoist-computation-free: removed 3 identity ops, moved 3 pass-through and 1 constant outputs to the host, built 1 tuples there, removed 1 empty regions, merged 1 adjacent regions

// A region output that is one of its inputs is taken from the host directly.
// CHECK-LABEL: func.func @passthrough
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Y:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = dycl.call_module "fc"(%[[X]])
// CHECK-NEXT:      dycl.yield %[[A]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[Y]], %[[X]] : tensor<4xf32>, tensor<4xf32>
func.func @passthrough(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y, %p = dycl.tensor_region -> (tensor<4xf32>, tensor<4xf32>) {
    %a = dycl.call_module "fc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %a, %x : tensor<4xf32>, tensor<4xf32>
  }
  dycl.return %y, %p : tensor<4xf32>, tensor<4xf32>
}

// A constant output is recomputed by the host.
// CHECK-LABEL: func.func @constant_output
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[K:.*]] = arith.constant 7 : i64
// CHECK-NEXT:    %[[Y:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = dycl.call_module "fc"(%[[X]])
// CHECK-NEXT:      dycl.yield %[[A]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[Y]], %[[K]] : tensor<4xf32>, i64
func.func @constant_output(%x: tensor<4xf32>) -> (tensor<4xf32>, i64) {
  %y, %k = dycl.tensor_region -> (tensor<4xf32>, i64) {
    %a = dycl.call_module "fc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %c = arith.constant 7 : i64
    dycl.yield %a, %c : tensor<4xf32>, i64
  }
  dycl.return %y, %k : tensor<4xf32>, i64
}

// `contiguous` of the same type is an identity: removed, its output becomes a
// pass-through. A `view` that changes the shape stays.
// CHECK-LABEL: func.func @identity
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[V:.*]] = dycl.tensor_region -> (tensor<2x2xf32>) {
// CHECK-NEXT:      %[[B:.*]] = dycl.call_method "view"(%[[X]], %[[C2]], %[[C2]]) : (tensor<4xf32>, i64, i64) -> tensor<2x2xf32>
// CHECK-NEXT:      dycl.yield %[[B]] : tensor<2x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[X]], %[[V]] : tensor<4xf32>, tensor<2x2xf32>
func.func @identity(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>) {
  %c2 = arith.constant 2 : i64
  %y, %v = dycl.tensor_region -> (tensor<4xf32>, tensor<2x2xf32>) {
    %a = dycl.call_method "contiguous"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %b = dycl.call_method "view"(%a, %c2, %c2) : (tensor<4xf32>, i64, i64) -> tensor<2x2xf32>
    dycl.yield %a, %b : tensor<4xf32>, tensor<2x2xf32>
  }
  dycl.return %y, %v : tensor<4xf32>, tensor<2x2xf32>
}

// Only identities: every output is a pass-through, the region disappears.
// CHECK-LABEL: func.func @emptied
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    dycl.return %[[X]] : tensor<4xf32>
func.func @emptied(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dycl.tensor_region -> (tensor<4xf32>) {
    %a = dycl.call_method "contiguous"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %b = dycl.call_method "detach"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %b : tensor<4xf32>
  }
  dycl.return %y : tensor<4xf32>
}

// Regions with only constants between them merge; the constants move above.
// CHECK-LABEL: func.func @merged
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[Z:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = dycl.call_module "fc1"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      %[[B:.*]] = dycl.call_method "roll"(%[[A]], %[[C2]]) : (tensor<4xf32>, i64) -> tensor<4xf32>
// CHECK-NEXT:      dycl.yield %[[B]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[Z]] : tensor<4xf32>
func.func @merged(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : i64
  %y = dycl.tensor_region -> (tensor<4xf32>) {
    %a = dycl.call_module "fc1"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %a : tensor<4xf32>
  }
  %c2 = arith.constant 2 : i64
  %z = dycl.tensor_region -> (tensor<4xf32>) {
    %b = dycl.call_method "roll"(%y, %c2) : (tensor<4xf32>, i64) -> tensor<4xf32>
    dycl.yield %b : tensor<4xf32>
  }
  dycl.return %z : tensor<4xf32>
}

// Unchanged: a host read between two regions keeps them apart, and
// F.dropout without `training` (which defaults to True) is not an identity.
// CHECK-LABEL: func.func @unchanged
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[Y:.*]], %[[G:.*]] = dycl.tensor_region -> (tensor<4xf32>, tensor<i1>) {
// CHECK-NEXT:      %[[A:.*]] = dycl.call_module "fc1"(%[[X]])
// CHECK-NEXT:      %[[S:.*]] = dycl.call_function "torch.all"(%[[A]])
// CHECK-NEXT:      dycl.yield %[[A]], %[[S]] : tensor<4xf32>, tensor<i1>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[G]] : tensor<i1>
// CHECK-NEXT:    %[[Z:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[P:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT:      %[[B:.*]] = dycl.call_function "torch.nn.functional.dropout"(%[[Y]], %[[P]])
// CHECK-NEXT:      dycl.yield %[[B]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[Z]] : tensor<4xf32>
func.func @unchanged(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y, %g = dycl.tensor_region -> (tensor<4xf32>, tensor<i1>) {
    %a = dycl.call_module "fc1"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %s = dycl.call_function "torch.all"(%a) : (tensor<4xf32>) -> tensor<i1>
    dycl.yield %a, %s : tensor<4xf32>, tensor<i1>
  }
  %c = dycl.to_bool %g : tensor<i1>
  %z = dycl.tensor_region -> (tensor<4xf32>) {
    %p = arith.constant 5.000000e-01 : f64
    %b = dycl.call_function "torch.nn.functional.dropout"(%y, %p) : (tensor<4xf32>, f64) -> tensor<4xf32>
    dycl.yield %b : tensor<4xf32>
  }
  dycl.return %z : tensor<4xf32>
}

// A tuple of a computed tensor and a host scalar is rebuilt on the host: the
// region yields only the tensor, so the scalar never becomes a device tensor.
// CHECK-LABEL: func.func @tuple_output
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[S:.*]]: f64)
// CHECK-NEXT:    %[[Y:.*]] = dycl.tensor_region -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = dycl.call_module "fc"(%[[X]])
// CHECK-NEXT:      dycl.yield %[[A]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = dycl.make_tuple(%[[Y]], %[[S]])
// CHECK-NEXT:    dycl.return %[[T]]
func.func @tuple_output(%x: tensor<4xf32>, %s: f64) -> !dycl.pyobj {
  %t = dycl.tensor_region -> (!dycl.pyobj) {
    %a = dycl.call_module "fc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %u = dycl.make_tuple(%a, %s) : (tensor<4xf32>, f64) -> !dycl.pyobj
    dycl.yield %u : !dycl.pyobj
  }
  dycl.return %t : !dycl.pyobj
}
