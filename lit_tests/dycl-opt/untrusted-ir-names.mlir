// RUN: sed 's|@EXAMPLES@|%examples|' %s | not dycl-opt -p shape-inference --model %examples/branchy.py:make_model 2>&1 | filecheck %s

// IR read from a file names the Python a pass calls: passes call torch, operator,
// math, dycl's tensor ops, Python's builtins for values and the model's own module,
// never anything else the IR names (here a shell command).
// CHECK: stdin:[[# @LINE + 4]]:5: error: the IR names the Python object 'os.system', which passes do not import or call for IR read from a file
builtin.module attributes {dycl.model = "@EXAMPLES@/branchy.py:make_model"} {
  func.func @forward(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
    %c = dycl.constant "touch /tmp/dycl-lit-must-not-exist" : !dycl.pyobj
    %r = dycl.call_function "os.system"(%c) : (!dycl.pyobj) -> !dycl.any
    dycl.return %x : tensor<1x16xf32>
  }
}
