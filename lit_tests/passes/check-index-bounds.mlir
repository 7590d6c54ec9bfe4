// RUN: dycl-opt %s -p 'check-index-bounds{model="%examples/captioner.py:make_model"}' | filecheck %s
// RUN: dycl-opt %s -p 'check-index-bounds{model="%examples/captioner.py:make_model"},sink-state-stores,extract-hcfg' | filecheck %s --check-prefix=HCFG

// examples/captioner.py: decoder.embedding = Embedding(12, 16). Indices from
// data are checked (0 <= i <= 11) and wrapped into range; the host raises eager's error.
// CHECK-LABEL: func.func @forward
// CHECK:         %[[LO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 11 : i64
// CHECK-NEXT:    %[[GE:.*]] = dycl.call_function "_operator.ge"(%ids, %[[LO]]) : (tensor<1x3xi64>, i64) -> tensor<1x3xi1>
// CHECK-NEXT:    %[[LE:.*]] = dycl.call_function "_operator.le"(%ids, %[[HI]])
// CHECK-NEXT:    %[[BOTH:.*]] = dycl.call_function "_operator.and_"(%[[GE]], %[[LE]])
// CHECK-NEXT:    %[[OK:.*]] = dycl.call_method "all"(%[[BOTH]]) : (tensor<1x3xi1>) -> tensor<i1>
// CHECK-NEXT:    %[[N:.*]] = arith.constant 12 : i64
// CHECK-NEXT:    %[[SAFE:.*]] = dycl.call_function "torch.remainder"(%ids, %[[N]]) : (tensor<1x3xi64>, i64) -> tensor<1x3xi64>
// CHECK-NEXT:    %e = dycl.call_module "decoder.embedding"(%[[SAFE]])
// CHECK-NEXT:    %[[READ:.*]] = dycl.to_bool %[[OK]]
// CHECK-NEXT:    dycl.if %[[READ]] {
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %{{.*}} = dycl.constant "index out of range in self"
// CHECK-NEXT:      dycl.raise "builtins.IndexError"
// CHECK:         } {dycl.bounds_check}

// A subscript by an integer tensor: negative indices count from the end. The
// tensor code also finds the first index out of range (argmax of "outside" with
// one more element, so never over nothing), which the host reads only when it
// raises, for eager's message; eager counts `x[:, j]` as the tuple's tensor index 0.
// CHECK:         %[[NLO:.*]] = arith.constant -5 : i64
// CHECK-NEXT:    %[[NHI:.*]] = arith.constant 4 : i64
// CHECK:         dycl.call_function "_operator.ge"(%j, %[[NLO]])
// CHECK:         %[[OUT:.*]] = dycl.call_function "torch.where"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2xi1>, i64, i64) -> tensor<2xi64>
// CHECK:         %[[FIRST:.*]] = dycl.call_method "argmax"(%{{.*}}) : (tensor<3xi64>) -> tensor<i64>
// CHECK:         %[[BAD:.*]] = dycl.call_method "index_select"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<3xi64>, i64, tensor<1xi64>) -> tensor<1xi64>
// CHECK:         %[[V:.*]] = dycl.item %[[BAD]] : tensor<1xi64> -> i64
// CHECK-NEXT:    dycl.raise "builtins.IndexError"(%[[V]]) {message = "index {} is out of bounds for dimension 0 with size 5"} : i64

// gather along dim 1 of a 2x5 tensor.
// CHECK:         dycl.raise "builtins.RuntimeError"(%{{.*}}) {message = "index {} is out of bounds for dimension 1 with size 5"} : i64

// argmax over a dim of 12 always indexes the 12-row table: no check.
// CHECK:         %best = dycl.call_method "argmax"
// CHECK-NEXT:    %e2 = dycl.call_module "decoder.embedding"(%best)

// An integer remainder by a tensor: a zero divisor divides by 1 in the kernel
// (no SIGFPE) and the host raises eager's RuntimeError.
// CHECK:         %[[ZERO:.*]] = dycl.call_function "_operator.eq"(%b, %{{.*}}) : (tensor<2xi64>, i64) -> tensor<2xi1>
// CHECK:         %[[DIV:.*]] = dycl.call_function "torch.where"(%[[ZERO]], %{{.*}}, %b)
// CHECK-NEXT:    %rem = dycl.call_function "_operator.mod"(%a, %[[DIV]])
// CHECK:         dycl.constant "ZeroDivisionError"
// So is `torch.div(a, b, rounding_mode="trunc")` (TVM's kernel trapped: SIGFPE).
// CHECK:         %[[TZERO:.*]] = dycl.call_function "_operator.eq"(%b, %{{.*}}) : (tensor<2xi64>, i64) -> tensor<2xi1>
// CHECK:         %[[TDIV:.*]] = dycl.call_function "torch.where"(%[[TZERO]], %{{.*}}, %b)
// CHECK-NEXT:    %quo = dycl.call_function "torch.div"(%a, %[[TDIV]], %trunc)

// A subscript the host read (`x[n]`): -2 <= n < 2 on the host, where n is made;
// the op reads index 0 where it fails (the kernel never reads past the end) and
// the host raises IndexError after it. Then a divisor the host read (`a % n`):
// n + (n == 0) and n != 0, likewise.
// CHECK:         %hn = dycl.item
// CHECK:         %[[LT:.*]] = arith.cmpi slt, %hn, %{{.*}} : i64
// CHECK-NEXT:    %[[OK:.*]] = arith.andi %{{.*}}, %[[LT]] : i1
// CHECK-NEXT:    %[[IDX:.*]] = arith.select %[[OK]], %hn, %{{.*}} : i64
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %hn, %[[Z]] : i64
// CHECK-NEXT:    %[[EXT:.*]] = arith.extui %[[EQ]] : i1 to i64
// CHECK-NEXT:    %[[SAFE:.*]] = arith.addi %hn, %[[EXT]] : i64
// CHECK-NEXT:    %{{.*}} = arith.cmpi ne, %hn, %[[Z]] : i64
// CHECK:         %hrem = dycl.call_function "_operator.mod"(%a, %[[SAFE]])
// CHECK:         %row = dycl.call_function "_operator.getitem"(%x, %[[IDX]])
// CHECK:         dycl.raise "builtins.IndexError"

// A max of a tensor whose size only the run time knows: eager raises on an empty one.
// The kernel reduces one more element, -inf (never the max of a non-empty input):
// ONNX Runtime's own error for an empty ArgMax would come before the host's.
// CHECK:         %[[ONES:.*]] = dycl.call_function "torch.ones_like"(%sel) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %{{.*}} = dycl.call_method "any"(%[[ONES]]) : (tensor<?xf32>) -> tensor<i1>
// CHECK-NEXT:    %[[NEG:.*]] = arith.constant 0xfff0000000000000 : f64
// CHECK:         %[[PAD:.*]] = dycl.call_method "new_full"(%sel, %{{.*}}, %[[NEG]]) : (tensor<?xf32>, !dycl.pyobj, f64) -> tensor<1xf32>
// CHECK:         %[[BOTH:.*]] = dycl.make_tuple(%sel, %[[PAD]]) {is_list}
// CHECK:         %[[SAFE:.*]] = dycl.call_function "torch.cat"(%[[BOTH]], %{{.*}}) : (!dycl.pyobj, i64) -> tensor<?xf32>
// CHECK-NEXT:    %top = dycl.call_method "max"(%[[SAFE]])
// CHECK:         dycl.constant "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."

// The checks wait for the next host op (here the read of n) or the end: the tensor
// work stays one region per segment, the host reads each check after it.
// HCFG:          dycl.tensor_region
// HCFG-NOT:      dycl.to_bool
// HCFG:          dycl.yield
// HCFG-NEXT:     }
// HCFG-NEXT:     dycl.to_bool
// HCFG:          dycl.raise "builtins.IndexError"
// HCFG:          dycl.to_bool
// HCFG:          dycl.raise "builtins.IndexError"
// HCFG:          dycl.to_bool
// HCFG:          dycl.raise "builtins.RuntimeError"
// HCFG:          dycl.to_bool
// HCFG:          dycl.raise "builtins.RuntimeError"
// HCFG:          %hn = dycl.item
// HCFG:          dycl.tensor_region
// HCFG-NOT:      dycl.to_bool
// HCFG:          dycl.yield
// HCFG-NEXT:     }
// HCFG-NEXT:     dycl.to_bool
// HCFG:          dycl.raise "builtins.RuntimeError"
// HCFG:          dycl.to_bool
// HCFG:          dycl.raise "builtins.RuntimeError"
// HCFG-NOT:      dycl.tensor_region

func.func @forward(%ids: tensor<1x3xi64>, %x: tensor<2x5xf32>, %j: tensor<2xi64>, %g: tensor<2x3xi64>, %a: tensor<2xi64>, %b: tensor<2xi64>, %sel: tensor<?xf32>) -> tensor<1x3x16xf32> {
  %e = dycl.call_module "decoder.embedding"(%ids) : (tensor<1x3xi64>) -> tensor<1x3x16xf32>
  %none = dycl.constant none : !dycl.pyobj
  %all = dycl.call_function "builtins.slice"(%none, %none, %none) : (!dycl.pyobj, !dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
  %sub = dycl.make_tuple(%all, %j) : (!dycl.pyobj, tensor<2xi64>) -> !dycl.pyobj
  %cols = dycl.call_function "_operator.getitem"(%x, %sub) : (tensor<2x5xf32>, !dycl.pyobj) -> tensor<2x2xf32>
  %one = arith.constant 1 : i64
  %picked = dycl.call_function "torch.gather"(%x, %one, %g) : (tensor<2x5xf32>, i64, tensor<2x3xi64>) -> tensor<2x3xf32>
  %n = arith.constant 12 : i64
  %twelve = dycl.call_function "torch.randn"(%one, %n) : (i64, i64) -> tensor<1x12xf32>
  %best = dycl.call_method "argmax"(%twelve, %one) : (tensor<1x12xf32>, i64) -> tensor<1xi64>
  %e2 = dycl.call_module "decoder.embedding"(%best) : (tensor<1xi64>) -> tensor<1x16xf32>
  %rem = dycl.call_function "_operator.mod"(%a, %b) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %trunc = dycl.constant "trunc" : !dycl.pyobj
  %quo = dycl.call_function "torch.div"(%a, %b, %trunc) {kwargs = ["rounding_mode"]} : (tensor<2xi64>, tensor<2xi64>, !dycl.pyobj) -> tensor<2xi64>
  %cnt = dycl.call_method "sum"(%b) : (tensor<2xi64>) -> tensor<i64>
  %hn = dycl.item %cnt : tensor<i64> -> i64
  %hrem = dycl.call_function "_operator.mod"(%a, %hn) : (tensor<2xi64>, i64) -> tensor<2xi64>
  %row = dycl.call_function "_operator.getitem"(%x, %hn) : (tensor<2x5xf32>, i64) -> tensor<5xf32>
  %top = dycl.call_method "max"(%sel) : (tensor<?xf32>) -> tensor<f32>
  func.return %e : tensor<1x3x16xf32>
}
