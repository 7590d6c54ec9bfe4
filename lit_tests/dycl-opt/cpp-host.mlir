// RUN: dycl-opt %s -p lower-host-scalars -t cpp-host | filecheck %s
// RUN: dycl-opt %s -p lower-host-scalars -t "cpp-host{device=cuda}" | filecheck %s --check-prefix=CUDA
// RUN: not dycl-opt %s -t cpp-host 2>&1 | filecheck %s --check-prefix=PY

// `-t cpp-host` prints the C++ host program `dycl compile --host cpp` builds: one
// dycl::SubDnn per sub-DNN, `forward` as typed C++ over tensors and scalars with
// the model's branches and loops, and the input checks of `run`.

// CHECK:       struct Program {
// CHECK-NEXT:    dycl::SubDnn sub_0;
// CHECK-NEXT:    dycl::SubDnn sub_1;
// CHECK:         p->sub_0 = dycl::SubDnn(dir + "/sub_0.so", "sub_0", kDLCPU);
// CUDA:          p->sub_0 = dycl::SubDnn(dir + "/sub_0.so", "sub_0", kDLCUDA);
// CHECK:       static std::vector<dycl::Value> forward(Program& rt, const dycl::Tensor& x) {
// CHECK-NEXT:    const std::vector<dycl::Tensor> sub_0_out = rt.sub_0({dycl::Value(x)});
// CHECK-NEXT:    const dycl::Tensor k = sub_0_out[0];
// CHECK-NEXT:    const int64_t n = dycl::item_i64(k);
// CHECK-NEXT:    const int64_t zero = INT64_C(0);
// CHECK-NEXT:    const int64_t step = INT64_C(1);
// CHECK-NEXT:    const bool c = (n > zero);
// CHECK-NEXT:    dycl::Tensor y{};
// CHECK-NEXT:    if (c) {
// CHECK-NEXT:      y = x;
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl::Tensor h{};
// CHECK-NEXT:      h = x;
// CHECK-NEXT:      for (int64_t i = zero; step > 0 ? i < n : i > n; i += step) {
// CHECK-NEXT:        const std::vector<dycl::Tensor> sub_1_out = rt.sub_1({dycl::Value(h)});
// CHECK-NEXT:        const dycl::Tensor h1 = sub_1_out[0];
// CHECK-NEXT:        h = h1;
// CHECK-NEXT:      }
// CHECK-NEXT:      const dycl::Tensor r = h;
// CHECK-NEXT:      y = r;
// CHECK-NEXT:    }
// CHECK-NEXT:    const std::vector<dycl::Value> out{dycl::Value(y), dycl::Value(n)};
// CHECK-NEXT:    return out;
// CHECK-NEXT:  }
// CHECK:       dycl::check_input_count(inputs, 1);
// CHECK-NEXT:  dycl::check_input(inputs, 0, {1, 4}, DLDataType{kDLFloat, 32, 1});

// Without lower-host-scalars the host still calls Python's operator.gt: refused.
// PY:          error: the C++ host cannot run this program (1 operation(s) outside the host contract):
// PY-NEXT:       cpp-host.mlir:[[# @LINE + 6]]:{{.*}}: Python call '_operator.gt'
func.func @forward(%x: tensor<1x4xf32>) -> !dycl.pyobj {
  %k = dycl.call_subgraph @sub_0(%x) : (tensor<1x4xf32>) -> tensor<i64>
  %n = dycl.item %k : tensor<i64> -> i64
  %zero = arith.constant 0 : i64
  %step = arith.constant 1 : i64
  %c = dycl.call_function "_operator.gt"(%n, %zero) : (i64, i64) -> i1
  %y = dycl.if %c -> (tensor<1x4xf32>) {
    dycl.yield %x : tensor<1x4xf32>
  } else {
    %r = dycl.for %i = %zero to %n step %step iter_args(%h = %x) -> (tensor<1x4xf32>) {
      %h1 = dycl.call_subgraph @sub_1(%h) : (tensor<1x4xf32>) -> tensor<1x4xf32>
      dycl.yield %h1 : tensor<1x4xf32>
    }
    dycl.yield %r : tensor<1x4xf32>
  }
  %out = dycl.make_tuple(%y, %n) : (tensor<1x4xf32>, i64) -> !dycl.pyobj
  dycl.return %out : !dycl.pyobj
}
func.func @sub_0(%x: tensor<1x4xf32>) -> tensor<i64> attributes {dycl.subgraph, dycl.backend = "tvm"} {
  %k = dycl.call_method "argmax"(%x) : (tensor<1x4xf32>) -> tensor<i64>
  func.return %k : tensor<i64>
}
func.func @sub_1(%x: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {dycl.subgraph, dycl.backend = "tvm"} {
  %y = dycl.call_function "torch.tanh"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
