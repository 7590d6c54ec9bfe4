// RUN: dycl-opt %s -p inline-calls | filecheck %s
// RUN: dycl-opt %s -p 'inline-calls{remove-dead-callees=false}' | filecheck %s --check-prefix=KEEP
// RUN: dycl-opt %s -p inline-calls | dycl-opt | filecheck %s
// RUN: dycl-opt %s -p inline-calls --print-op-generic | dycl-opt | filecheck %s

// A simple call: the callee's body replaces it, the argument substituted and
// the returned value taking the place of the call's result. The private callee
// has no use left and is erased (kept with remove-dead-callees=false).
// CHECK-NOT:   func.func private @add_one
// CHECK-LABEL: func.func @simple
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = dycl.call_module "fc"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Z:.*]] = dycl.call_function "torch.relu"(%[[B]])
// CHECK-NEXT:    dycl.return %[[Z]] : tensor<4xf32>
// CHECK-NEXT:  }
// KEEP-LABEL:  func.func private @add_one
// KEEP-LABEL:  func.func @simple
// KEEP-NOT:      func.call
// KEEP:          dycl.return
func.func private @add_one(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = dycl.call_module "fc"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
func.func @simple(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @add_one(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = dycl.call_function "torch.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %z : tensor<4xf32>
}

// A callee with two results (ending in dycl.return): both are substituted.
// CHECK-NOT:   func.func private @split
// CHECK-LABEL: func.func @multiple_results
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[N:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[B:.*]] = dycl.call_method "roll"(%[[X]], %[[N]])
// CHECK-NEXT:    %[[Z:.*]] = dycl.call_method "roll"(%[[B]], %[[N]])
// CHECK-NEXT:    dycl.return %[[Z]] : tensor<4xf32>
func.func private @split(%a: tensor<4xf32>) -> (tensor<4xf32>, i64) {
  %n = arith.constant 2 : i64
  %b = dycl.call_method "roll"(%a, %n) : (tensor<4xf32>, i64) -> tensor<4xf32>
  dycl.return %b, %n : tensor<4xf32>, i64
}
func.func @multiple_results(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y, %n = func.call @split(%x) : (tensor<4xf32>) -> (tensor<4xf32>, i64)
  %z = dycl.call_method "roll"(%y, %n) : (tensor<4xf32>, i64) -> tensor<4xf32>
  dycl.return %z : tensor<4xf32>
}

// Calls inside an inlined body are inlined too; both helpers go.
// CHECK-NOT:   func.func private @inner
// CHECK-NOT:   func.func private @outer
// CHECK-LABEL: func.func @nested
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = dycl.call_module "inner"(%[[X]])
// CHECK-NEXT:    %[[B:.*]] = dycl.call_module "inner"(%[[A]])
// CHECK-NEXT:    dycl.return %[[B]] : tensor<4xf32>
// KEEP-LABEL:  func.func private @inner
// KEEP-LABEL:  func.func private @outer
// KEEP-NOT:      func.call
// KEEP-LABEL:  func.func @nested
func.func private @inner(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = dycl.call_module "inner"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
func.func private @outer(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = func.call @inner(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = func.call @inner(%b) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @outer(%x) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}

// A call inside a dycl.if branch is inlined in that branch.
// CHECK-LABEL: func.func @call_in_if
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1)
// CHECK-NEXT:    %[[R:.*]] = dycl.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[S:.*]] = dycl.call_module "scale"(%[[X]])
// CHECK-NEXT:      dycl.yield %[[S]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      dycl.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<4xf32>
func.func private @scale(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = dycl.call_module "scale"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
func.func @call_in_if(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = dycl.if %c -> (tensor<4xf32>) {
    %y = func.call @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %y : tensor<4xf32>
  } else {
    dycl.yield %x : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}

// A callee whose body holds a dycl.if with results.
// CHECK-LABEL: func.func @callee_with_if
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[S:.*]] = dycl.call_method "sum"(%[[X]])
// CHECK-NEXT:    %[[C:.*]] = dycl.to_bool %[[S]] : tensor<f32>
// CHECK-NEXT:    %[[R:.*]] = dycl.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT:      dycl.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[N:.*]] = dycl.call_module "neg"(%[[Y]])
// CHECK-NEXT:      dycl.yield %[[N]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[R]] : tensor<4xf32>
func.func private @choose(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %s = dycl.call_method "sum"(%a) : (tensor<4xf32>) -> tensor<f32>
  %c = dycl.to_bool %s : tensor<f32>
  %r = dycl.if %c -> (tensor<4xf32>) {
    dycl.yield %a : tensor<4xf32>
  } else {
    %n = dycl.call_module "neg"(%b) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %n : tensor<4xf32>
  }
  dycl.return %r : tensor<4xf32>
}
func.func @callee_with_if(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @choose(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  dycl.return %r : tensor<4xf32>
}

// An early dycl.return in the callee returns from the callee, not the caller:
// the if absorbs the rest of the callee and yields what it returns, and the
// caller's code after the call ("head") runs on every path.
// CHECK-LABEL: func.func @early_return
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1)
// CHECK-NEXT:    %[[Y:.*]] = dycl.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT:      dycl.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[B:.*]] = dycl.call_module "block"(%[[X]])
// CHECK-NEXT:      dycl.yield %[[B]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Z:.*]] = dycl.call_module "head"(%[[Y]])
// CHECK-NEXT:    dycl.return %[[Z]] : tensor<4xf32>
func.func private @exit_early(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  dycl.if %c {
    dycl.return %a : tensor<4xf32>
  } else {
    dycl.yield
  }
  %b = dycl.call_module "block"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %b : tensor<4xf32>
}
func.func @early_return(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %y = func.call @exit_early(%x, %c) : (tensor<4xf32>, i1) -> tensor<4xf32>
  %z = dycl.call_module "head"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %z : tensor<4xf32>
}

// An early return nested two ifs deep, the outer if having a result: the code
// after each if is copied into its branches that fall through ("q" twice), the
// outer if's result replaced by what each branch yielded.
// CHECK-LABEL: func.func @nested_early_return
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: i1, %[[D:.*]]: i1)
// CHECK-NEXT:    %[[Y:.*]] = dycl.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[I:.*]] = dycl.if %[[D]] -> (tensor<4xf32>) {
// CHECK-NEXT:        dycl.yield %[[X]] : tensor<4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[P:.*]] = dycl.call_module "p"(%[[X]])
// CHECK-NEXT:        %[[Q:.*]] = dycl.call_module "q"(%[[P]])
// CHECK-NEXT:        dycl.yield %[[Q]] : tensor<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      dycl.yield %[[I]] : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[Q2:.*]] = dycl.call_module "q"(%[[X]])
// CHECK-NEXT:      dycl.yield %[[Q2]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[Y]] : tensor<4xf32>
func.func private @deep_exit(%a: tensor<4xf32>, %c: i1, %d: i1) -> tensor<4xf32> {
  %r = dycl.if %c -> (tensor<4xf32>) {
    dycl.if %d {
      dycl.return %a : tensor<4xf32>
    } else {
      dycl.yield
    }
    %p = dycl.call_module "p"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    dycl.yield %p : tensor<4xf32>
  } else {
    dycl.yield %a : tensor<4xf32>
  }
  %q = dycl.call_module "q"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %q : tensor<4xf32>
}
func.func @nested_early_return(%x: tensor<4xf32>, %c: i1, %d: i1) -> tensor<4xf32> {
  %y = func.call @deep_exit(%x, %c, %d) : (tensor<4xf32>, i1, i1) -> tensor<4xf32>
  dycl.return %y : tensor<4xf32>
}

// A callee without results holding a dycl.for.
// CHECK-LABEL: func.func @no_results
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[N:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    dycl.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK-NEXT:      dycl.call_module "log"(%[[X]], %[[I]])
// CHECK-NEXT:      dycl.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    dycl.return %[[X]] : tensor<4xf32>
func.func private @log(%a: tensor<4xf32>) {
  %n = arith.constant 3 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  dycl.for %i = %c0 to %n step %c1 {
    %b = dycl.call_module "log"(%a, %i) : (tensor<4xf32>, i64) -> tensor<4xf32>
    dycl.yield
  }
  dycl.return
}
func.func @no_results(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.call @log(%x) : (tensor<4xf32>) -> ()
  dycl.return %x : tensor<4xf32>
}

// A public function is inlined but kept (it may be an entry point); a call to
// a sub-DNN (dycl.subgraph) is never inlined.
// CHECK-LABEL: func.func @public_helper
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = dycl.call_module "helper"(%[[X]])
// CHECK-NEXT:    %[[Z:.*]] = func.call @sub_0(%[[B]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    dycl.return %[[Z]] : tensor<4xf32>
// CHECK-LABEL: func.func private @sub_0
// CHECK-SAME:    attributes {dycl.subgraph}
func.func @public_helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = dycl.call_module "helper"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @public_helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = func.call @sub_0(%y) : (tensor<4xf32>) -> tensor<4xf32>
  dycl.return %z : tensor<4xf32>
}
func.func private @sub_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {dycl.subgraph} {
  %b = dycl.call_module "sub"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
