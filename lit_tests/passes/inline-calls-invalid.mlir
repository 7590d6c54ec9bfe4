// RUN: not dycl-opt %s -p inline-calls 2>&1 | filecheck %s

// A call to a function the module does not define: the verifier reports it at
// the call before the pass runs (the pass itself raises a located error for
// unverified IR given to it from Python).
// CHECK: inline-calls-invalid.mlir:[[# @LINE + 3]]:3: error: '@missing' could not be found in symbol table
// CHECK-NOT: Traceback
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @missing(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}
