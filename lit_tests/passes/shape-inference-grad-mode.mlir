// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model" grad_mode="on"}' | filecheck %s --check-prefix=ON
// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model" grad_mode="off"}' | filecheck %s --check-prefix=OFF
// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model" grad_mode="inference"}' | filecheck %s --check-prefix=INF
// RUN: not dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model" grad_mode="sideways"}' 2>&1 | filecheck %s --check-prefix=BAD

// Autograd queries become the constants they give for calls in the caller's grad
// mode (the option; by default the mode of the thread running the pass), each call
// run in its own switches (`dycl.grad_mode`). The module records the mode they were
// decided for: the compiled model checks it at each call.

// BAD: error: shape-inference: grad_mode must be one of on, off, inference; got 'sideways'

// ON:  builtin.module attributes {dycl.caller_grad_mode = "on"}
// ON:    %[[P:.*]] = arith.constant true
// ON:    %[[O:.*]] = arith.constant false
// ON:    %[[E:.*]] = arith.constant true
// ON:    dycl.make_tuple(%[[P]], %[[O]], %[[E]], %{{.*}})

// OFF: builtin.module attributes {dycl.caller_grad_mode = "off"}
// OFF:   %[[P:.*]] = arith.constant false
// OFF:   %[[O:.*]] = arith.constant false
// OFF:   %[[E:.*]] = arith.constant false
// OFF:   dycl.make_tuple(%[[P]], %[[O]], %[[E]], %{{.*}})

// INF: builtin.module attributes {dycl.caller_grad_mode = "inference"}
// INF:   %[[I:.*]] = arith.constant true
// INF:   dycl.make_tuple(%{{.*}}, %{{.*}}, %{{.*}}, %[[I]])
func.func @forward(%x: tensor<1x16xf32>) -> !dycl.any {
  %h = dycl.call_module "pre"(%x) : (tensor<1x16xf32>) -> !dycl.any
  %name = dycl.constant "requires_grad" : !dycl.pyobj
  %p = dycl.call_function "builtins.getattr"(%h, %name) : (!dycl.any, !dycl.pyobj) -> !dycl.any
  %g = dycl.call_module "b"(%x) {dycl.grad_mode = "off"} : (tensor<1x16xf32>) -> !dycl.any
  %o = dycl.call_function "builtins.getattr"(%g, %name) : (!dycl.any, !dycl.pyobj) -> !dycl.any
  %e = dycl.call_function "torch.is_grad_enabled"() : () -> !dycl.any
  %i = dycl.call_function "torch.is_inference_mode_enabled"() : () -> !dycl.any
  %t = dycl.make_tuple(%p, %o, %e, %i) : (!dycl.any, !dycl.any, !dycl.any, !dycl.any) -> !dycl.any
  func.return %t : !dycl.any
}
