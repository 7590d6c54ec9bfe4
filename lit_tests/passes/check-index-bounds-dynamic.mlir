// RUN: dycl-opt %s -p 'check-index-bounds{model="%examples/captioner.py:make_model"}' | filecheck %s

// A table whose row count is known only at run time (`?`, rows a mask selected):
// the bound is read in the tensor code (h.shape[0]) and the bounds computed from it
// as tensors (so the sub-DNN takes the size itself); the index is wrapped by at
// least 1 and the table read with one zero row more (F.pad), so a kernel never
// reads an empty table (an empty table fails the check all the same), and the
// host raises.
// CHECK-LABEL: func.func @forward
// CHECK:         %[[SHAPE:.*]] = dycl.call_function "builtins.getattr"(%h, %{{.*}}) : (tensor<?x4xf32>, !dycl.pyobj) -> !dycl.pyobj
// CHECK-NEXT:    %[[DIM:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[N:.*]] = dycl.call_function "_operator.getitem"(%[[SHAPE]], %[[DIM]]) : (!dycl.pyobj, i64) -> i64
// CHECK-NEXT:    %[[NT:.*]] = dycl.call_function "torch.as_tensor"(%[[N]]) : (i64) -> tensor<i64>
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[HI:.*]] = dycl.call_function "_operator.sub"(%[[NT]], %[[ONE]]) : (tensor<i64>, i64) -> tensor<i64>
// CHECK-NEXT:    %[[LO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[EMPTY:.*]] = dycl.call_function "_operator.lt"(%[[NT]], %[[ONE]]) : (tensor<i64>, i64) -> tensor<i1>
// CHECK-NEXT:    %[[WRAP:.*]] = dycl.call_function "torch.where"(%[[EMPTY]], %[[ONE]], %[[NT]]) : (tensor<i1>, i64, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %{{.*}} = dycl.call_function "_operator.ge"(%ids, %[[LO]])
// CHECK:         %[[SAFE:.*]] = dycl.call_function "torch.remainder"(%ids, %[[WRAP]]) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
// CHECK:         %[[PADDED:.*]] = dycl.call_function "torch.nn.functional.pad"(%h, %{{.*}}) : (tensor<?x4xf32>, !dycl.pyobj) -> tensor<?x4xf32>
// CHECK-NEXT:    %rows = dycl.call_method "index_select"(%[[PADDED]], %{{.*}}, %[[SAFE]])
// CHECK:         dycl.constant "index_select(): self indexing axis dim should be positive"
// CHECK:         dycl.constant "index out of range in self"
// CHECK-NEXT:    dycl.raise "builtins.IndexError"

// A subscript by an integer tensor on a `?` dim: negative indices from the end (-n);
// the message has the first index out of range and the run's size, or eager's own
// text where the dim is empty.
// CHECK:         dycl.call_function "_operator.neg"
// CHECK:         %[[EQ:.*]] = arith.cmpi eq, %[[SIZE:[^,]*]], %{{.*}} : i64
// CHECK-NEXT:    dycl.if %[[EQ]] {
// CHECK-NEXT:      %[[TEXT:.*]] = dycl.constant "index is out of bounds for dimension with size 0"
// CHECK-NEXT:      dycl.raise "builtins.IndexError"(%[[TEXT]])
// CHECK:         } else {
// CHECK-NEXT:      %[[FIRST:.*]] = dycl.item %{{.*}} : tensor<1xi64> -> i64
// CHECK-NEXT:      dycl.raise "builtins.IndexError"(%[[FIRST]], %[[SIZE]]) {message = "index {} is out of bounds for dimension 0 with size {}"} : i64, i64

// A host int into a `?` dim: checked in the tensor code as a 0-d index tensor.
// CHECK:         %[[T:.*]] = dycl.call_function "torch.as_tensor"(%i) : (i64) -> tensor<i64>
// CHECK:         dycl.call_function "_operator.ge"(%[[T]], %{{.*}}) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK:         %[[TS:.*]] = dycl.call_function "torch.remainder"(%[[T]], %{{.*}}) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         %row = dycl.call_function "_operator.getitem"(%{{.*}}, %[[TS]])

// Negative repeat counts: eager's RuntimeError; the kernel gets them clamped at 0.
// CHECK:         %[[R:.*]] = dycl.call_function "torch.clamp"(%reps, %{{.*}}) : (tensor<3xi64>, i64) -> tensor<3xi64>
// CHECK-NEXT:    %rep = dycl.call_function "torch.repeat_interleave"(%x, %[[R]])
// CHECK:         dycl.constant "repeats can not be negative"
// CHECK:         dycl.raise "builtins.RuntimeError"

func.func @forward(%h: tensor<?x4xf32>, %ids: tensor<2xi64>, %x: tensor<3xf32>, %reps: tensor<3xi64>, %i: i64) -> tensor<2x4xf32> {
  %zero = arith.constant 0 : i64
  %rows = dycl.call_method "index_select"(%h, %zero, %ids) : (tensor<?x4xf32>, i64, tensor<2xi64>) -> tensor<2x4xf32>
  %sub = dycl.call_function "_operator.getitem"(%h, %ids) : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %row = dycl.call_function "_operator.getitem"(%h, %i) : (tensor<?x4xf32>, i64) -> tensor<4xf32>
  %rep = dycl.call_function "torch.repeat_interleave"(%x, %reps) : (tensor<3xf32>, tensor<3xi64>) -> tensor<?xf32>
  func.return %rows : tensor<2x4xf32>
}

// narrow of a `?` dim at a host int start: eager's two checks (IndexError for a
// start outside [-n, n], checked first; RuntimeError past the end), and the rows
// gathered at the start wrapped as eager wraps it (a slice from -2 of length 2 gave
// no rows).
// CHECK-LABEL: func.func @narrowed
// CHECK:         %[[START:.*]] = dycl.call_function "torch.as_tensor"(%s) : (i64) -> tensor<i64>
// CHECK:         %[[WRAPPED:.*]] = dycl.call_function "torch.where"
// CHECK:         %[[ROWS:.*]] = dycl.call_function "torch.arange"
// CHECK:         %[[AT:.*]] = dycl.call_function "_operator.add"(%[[ROWS]], %[[WRAPPED]]) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
// CHECK:         %[[SAFE:.*]] = dycl.call_function "torch.remainder"(%[[AT]], %{{.*}}) : (tensor<2xi64>, i64) -> tensor<2xi64>
// CHECK-NEXT:    %{{.*}} = dycl.call_method "index_select"(%h, %{{.*}}, %[[SAFE]]) : (tensor<?x4xf32>, i64, tensor<2xi64>) -> tensor<2x4xf32>
// CHECK-NOT:     "narrow"
// CHECK:         dycl.raise "builtins.IndexError"
// CHECK:         dycl.raise "builtins.RuntimeError"
func.func @narrowed(%h: tensor<?x4xf32>, %s: i64) -> tensor<2x4xf32> {
  %z = arith.constant 0 : i64
  %two = arith.constant 2 : i64
  %n = dycl.call_method "narrow"(%h, %z, %s, %two) : (tensor<?x4xf32>, i64, i64, i64) -> tensor<2x4xf32>
  dycl.return %n : tensor<2x4xf32>
}
