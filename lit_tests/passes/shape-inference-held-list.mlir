// RUN: dycl-opt %s -p 'shape-inference{model="%examples/branchy.py:make_model"}' | filecheck %s

// Lists a data-dependent loop appends to are held by the host (`!dycl.list`). The
// loop enters with `[]` (a list of `!dycl.any`) and yields a list of i64 and one
// of 1x4 tensors: both are carried with that element type, and the loop typed
// again. A call that takes a held list (`torch.stack`, `torch.tensor`) is run by
// the host (`dycl.on_host`); its size along the list is dynamic, from running it
// on lists of one and of two elements; `torch.tensor([])` is float32 whatever the
// elements' type, which the host checks (`dycl.empty_list_dtype`).

// CHECK-LABEL: func.func @decode
// CHECK:         %{{.*}}, %[[IDS:.*]], %[[OUTS:.*]] = dycl.while (%{{.*}} = %x, %{{.*}} = %ids, %{{.*}} = %outs) -> (tensor<1x4xf32>, !dycl.list<i64>, !dycl.list<tensor<1x4xf32>>) cond {
// CHECK:           %n = dycl.list_len %{{.*}} : !dycl.list<i64>
// CHECK:         ^bb0(%{{.*}}: tensor<1x4xf32>, %{{.*}}: !dycl.list<i64>, %{{.*}}: !dycl.list<tensor<1x4xf32>>):
// CHECK:           %id = dycl.item %{{.*}} : tensor<i64> -> i64
// CHECK:           %[[APPENDED:.*]] = dycl.list_append %{{.*}}, %id : !dycl.list<i64>, i64 -> !dycl.list<i64>
// CHECK:           %{{.*}} = dycl.list_append %{{.*}}, %y : !dycl.list<tensor<1x4xf32>>, tensor<1x4xf32> -> !dycl.list<tensor<1x4xf32>>
// CHECK:           %last = dycl.list_get %[[APPENDED]][%c0] : !dycl.list<i64> -> i64
// CHECK:         %stacked = dycl.call_function "torch.stack"(%[[OUTS]], %c1) {dycl.on_host, dycl.data_dependent_shape} : (!dycl.list<tensor<1x4xf32>>, i64) -> tensor<1x?x4xf32>
// CHECK:         %tokens = dycl.call_function "torch.tensor"(%[[IDS]]) {dycl.on_host, dycl.empty_list_dtype = "torch.float32", dycl.data_dependent_shape} : (!dycl.list<i64>) -> tensor<?xi64>
func.func @decode(%x: tensor<1x4xf32>) -> !dycl.any {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c8 = arith.constant 8 : i64
  %ids = dycl.make_list() : () -> !dycl.list<!dycl.any>
  %outs = dycl.make_list() : () -> !dycl.list<!dycl.any>
  %h, %ids_r, %outs_r = dycl.while (%h_0 = %x, %ids_0 = %ids, %outs_0 = %outs) -> (!dycl.any, !dycl.list<!dycl.any>, !dycl.list<!dycl.any>) cond {
    %n = dycl.list_len %ids_0 : !dycl.list<!dycl.any>
    %go = arith.cmpi slt, %n, %c8 : i64
    dycl.condition %go
  } do {
  ^bb0(%h_1: !dycl.any, %ids_1: !dycl.list<!dycl.any>, %outs_1: !dycl.list<!dycl.any>):
    %y = dycl.call_function "torch.tanh"(%h_1) : (!dycl.any) -> !dycl.any
    %am = dycl.call_method "argmax"(%y) : (!dycl.any) -> !dycl.any
    %id = dycl.item %am : !dycl.any -> !dycl.any
    %ids_2 = dycl.list_append %ids_1, %id : !dycl.list<!dycl.any>, !dycl.any -> !dycl.list<!dycl.any>
    %outs_2 = dycl.list_append %outs_1, %y : !dycl.list<!dycl.any>, !dycl.any -> !dycl.list<!dycl.any>
    %last = dycl.list_get %ids_2[%c0] : !dycl.list<!dycl.any> -> !dycl.any
    dycl.yield %y, %ids_2, %outs_2 : !dycl.any, !dycl.list<!dycl.any>, !dycl.list<!dycl.any>
  }
  %stacked = dycl.call_function "torch.stack"(%outs_r, %c1) : (!dycl.list<!dycl.any>, i64) -> !dycl.any
  %tokens = dycl.call_function "torch.tensor"(%ids_r) : (!dycl.list<!dycl.any>) -> !dycl.any
  %r = dycl.make_tuple(%stacked, %tokens) : (!dycl.any, !dycl.any) -> !dycl.any
  dycl.return %r : !dycl.any
}
