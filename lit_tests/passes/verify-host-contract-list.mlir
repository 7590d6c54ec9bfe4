// RUN: not dycl-opt %s -p verify-host-contract 2>&1 | filecheck %s --check-prefix=STRICT
// RUN: dycl-opt %s -p 'verify-host-contract{allow-python=true}' | filecheck %s --check-prefix=PYTHON

// A list held at run time (a decoder's tokens) is Python: the Python host runs
// it, the C++ host refuses each list op and the call that takes the list.
// STRICT:      error: the C++ host cannot run this program (3 operation(s) outside the host contract):
// STRICT-NEXT:   a list held at run time (a Python list the loop appends to)
// STRICT-NEXT:   a list held at run time (a Python list the loop appends to)
// STRICT-NEXT:   call 'torch.tensor' of a list held at run time (Python, run by the host)
// PYTHON: dycl.list_append
func.func @forward(%n: i64) -> tensor<?xi64> {
  %e = dycl.make_list() : () -> !dycl.list<!dycl.any>
  %l = dycl.list_append %e, %n : !dycl.list<!dycl.any>, i64 -> !dycl.list<i64>
  %t = dycl.call_function "torch.tensor"(%l) {dycl.on_host} : (!dycl.list<i64>) -> tensor<?xi64>
  dycl.return %t : tensor<?xi64>
}
