// RUN: dycl-opt %s -p extract-hcfg,outline-subgraphs,"assign-backends{backend=torch}" -t python-host | filecheck %s

// `-t python-host` prints the host program `dycl compile` writes: the loader of
// each backend the sub-DNNs got (by import path), and `forward` running the
// control flow between their calls (a host check raises as eager does).

// CHECK:       from dycl.runtime.host_support import Program, resolve_global as _resolve, to_bool as _to_bool
// CHECK:       _LOADERS = {'torch': 'dycl.runtime.loaders.torch_eager:load'}
// CHECK:       def forward(rt, x):
// CHECK-NEXT:      big, = rt.sub_0(x)
// CHECK-NEXT:      c = _to_bool(big)
// CHECK-NEXT:      if c:
// CHECK-NEXT:          msg = 'input too large'
// CHECK-NEXT:          raise _resolve('builtins.ValueError')(msg)
// CHECK-NEXT:          return None
// CHECK-NEXT:      r, = rt.sub_1(x)
// CHECK-NEXT:      return r
// CHECK:       return Program(path, forward, _LOADERS, _REGIONS, _STATE, model=model)
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = dycl.call_method "sum"(%x) : (tensor<1x4xf32>) -> tensor<f32>
  %limit = arith.constant 100 : i64
  %big = dycl.call_function "_operator.gt"(%s, %limit) : (tensor<f32>, i64) -> tensor<i1>
  %c = dycl.to_bool %big : tensor<i1>
  dycl.if %c {
    %msg = dycl.constant "input too large" : !dycl.pyobj
    dycl.raise "builtins.ValueError"(%msg) : !dycl.pyobj
    dycl.return
  } else {
    dycl.yield
  }
  %r = dycl.call_function "torch.tanh"(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  dycl.return %r : tensor<1x4xf32>
}
