// RUN: not dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not dycl-opt %s -p shape-inference 2>&1 | filecheck %s --check-prefix=NOMODEL
// RUN: not dycl-opt %s -p 'shape-inference{model="%examples/no_such_file.py:make_model"}' 2>&1 | filecheck %s --check-prefix=NOFILE

// `a.0` is Linear(16, 16): an 8-wide input fails on the fake tensors, and the
// diagnostic points at the op that failed.
// ERR: shape-inference-invalid.mlir:[[# @LINE + 5]]:3: error: shape inference failed: RuntimeError: {{.+}}
// ERR-NOT: Traceback
// NOMODEL: error: the IR module has no 'dycl.model' attribute; pass the model as a pass option
// NOFILE: error: model file '{{.*}}no_such_file.py' does not exist
func.func @forward(%x: tensor<1x8xf32>) -> !dycl.any {
  %y = dycl.call_module "a.0"(%x) : (tensor<1x8xf32>) -> !dycl.any
  dycl.return %y : !dycl.any
}
