// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model" grad_mode="on"}' | filecheck %s --check-prefix=ON
// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model" grad_mode="off"}' | filecheck %s --check-prefix=OFF

// The text of a tensor is a Python string only the run time knows (it shows the
// data), never one formatted from the pass's fake tensors. It shows autograd's
// graph too (`grad_fn=<...>`): in grad mode, of a module's result that requires
// grad, calls run as eager (sub-DNNs' tensors have no graph).

// ON:  builtin.module attributes {dycl.caller_grad_mode = "on", dycl.autograd_in_eager}
// ON:    dycl.call_function "builtins.format"(%{{.*}}, %spec) : (tensor<1x16xf32>, !dycl.pyobj) -> !dycl.pyobj
// ON-NOT: FakeTensor

// OFF: builtin.module attributes {dycl.caller_grad_mode = "off"}
// OFF:   %[[T:.*]] = dycl.call_function "builtins.format"(%{{.*}}, %spec) : (tensor<1x16xf32>, !dycl.pyobj) -> !dycl.pyobj
// OFF:   dycl.call_function "_operator.add"(%[[T]], %{{.*}}) : (!dycl.pyobj, !dycl.pyobj) -> !dycl.pyobj
func.func @forward(%x: tensor<1x16xf32>) -> !dycl.any {
  %h = dycl.call_module "pre"(%x) : (tensor<1x16xf32>) -> !dycl.any
  %spec = dycl.constant ".2f" : !dycl.pyobj
  %t = dycl.call_function "builtins.format"(%h, %spec) : (!dycl.any, !dycl.pyobj) -> !dycl.any
  %tail = dycl.constant " done" : !dycl.pyobj
  %j = dycl.call_function "_operator.add"(%t, %tail) : (!dycl.any, !dycl.pyobj) -> !dycl.any
  func.return %j : !dycl.any
}
