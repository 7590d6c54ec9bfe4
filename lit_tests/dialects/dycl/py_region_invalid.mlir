// RUN: dycl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics

// Every verifier error of dycl.py_region.

func.func @not_python(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.py_region' code is not valid Python}}
  %y = dycl.py_region(%x) {code = "def (", globals = "m", loc = "m.py:1:1", construct = "c", reason = "r"} : (tensor<2xf32>) -> !dycl.any
  func.return
}

// -----

func.func @two_functions(%x: tensor<2xf32>) {
  // expected-error @below {{'dycl.py_region' code must define exactly one function '__dycl_region'}}
  %y = dycl.py_region(%x) {code = "def __dycl_region(r, x):\0A    pass\0Adef g():\0A    pass\0A", globals = "m", loc = "m.py:1:1", construct = "c", reason = "r"} : (tensor<2xf32>) -> !dycl.any
  func.return
}

// -----

func.func @wrong_arity(%x: tensor<2xf32>) {
  // expected-error @below {{'__dycl_region' takes 1 parameters; expected the model and 1 operand(s)}}
  %y = dycl.py_region(%x) {code = "def __dycl_region(r):\0A    return (1,)\0A", globals = "m", loc = "m.py:1:1", construct = "c", reason = "r"} : (tensor<2xf32>) -> !dycl.any
  func.return
}

// -----

func.func @varargs() {
  // expected-error @below {{'__dycl_region' takes plain positional parameters only}}
  dycl.py_region() {code = "def __dycl_region(r, *a):\0A    pass\0A", globals = "m", loc = "m.py:1:1", construct = "c", reason = "r"} : () -> ()
  func.return
}

// -----

func.func @tail_two_results() {
  // expected-error @below {{a tail 'dycl.py_region' has exactly one result (the returned value)}}
  %a, %b = dycl.py_region() {code = "def __dycl_region(r):\0A    return 1\0A", globals = "m", loc = "m.py:1:1", construct = "c", reason = "r", tail} : () -> (!dycl.any, !dycl.any)
  func.return
}

// -----

func.func @no_globals() {
  // expected-error @below {{'dycl.py_region' needs the name of the globals it runs in}}
  dycl.py_region() {code = "def __dycl_region(r):\0A    pass\0A", globals = "", loc = "m.py:1:1", construct = "c", reason = "r"} : () -> ()
  func.return
}
