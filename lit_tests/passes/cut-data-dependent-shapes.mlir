// RUN: dycl-opt %s -p cut-data-dependent-shapes | filecheck %s
// RUN: dycl-opt %s -p cut-data-dependent-shapes,extract-hcfg,outline-subgraphs | filecheck %s --check-prefix=OUT

// The ops shape-inference marked as making a data-dependent size (`x[mask]`,
// `nonzero`) run on the host; a submodule call stays whole, so does `x[mask]`
// whose rows are written back through the mask (`x[mask] = tanh(x[mask])`), and
// unmarked ops are left alone. After outlining, the sub-DNN before the cut hands the mask and rows
// over, and the sub-DNNs after it take the `?`-sized tensors.

// CHECK-LABEL: func.func @forward
// CHECK:         %mask = dycl.call_function "_operator.gt"(%rsum, %z) : (tensor<6xf32>, i64) -> tensor<6xi1>
// CHECK-NEXT:    %sel = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape, dycl.on_host}
// CHECK-NEXT:    %t = dycl.call_function "torch.tanh"(%sel) : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT:    %idx = dycl.call_method "nonzero"(%mask) {dycl.data_dependent_shape, dycl.on_host}
// CHECK-NEXT:    %m = dycl.call_module "fc"(%idx) {dycl.data_dependent_shape} : (tensor<?x1xi64>) -> tensor<?x8xf32>
// CHECK-NEXT:    %rows = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape} : (tensor<6x8xf32>, tensor<6xi1>) -> tensor<?x8xf32>

// OUT-LABEL: func.func @forward
// OUT:         %mask = dycl.call_subgraph @sub_0(%x) : (tensor<6x8xf32>) -> tensor<6xi1>
// OUT-NEXT:    %sel = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape, dycl.on_host}
// OUT-NEXT:    %t = dycl.call_subgraph @sub_1(%sel) : (tensor<?x8xf32>) -> tensor<?x8xf32>
// OUT-NEXT:    %idx = dycl.call_method "nonzero"(%mask) {dycl.data_dependent_shape, dycl.on_host}
// OUT-NEXT:    %m, %upd = dycl.call_subgraph @sub_2(%idx, %x, %mask)
// OUT:       func.func @sub_0(%x: tensor<6x8xf32>) -> tensor<6xi1> attributes {dycl.subgraph}
// OUT:       func.func @sub_1(%sel: tensor<?x8xf32>) -> tensor<?x8xf32> attributes {dycl.subgraph}
// OUT:       func.func @sub_2(%idx: tensor<?x1xi64>, %x: tensor<6x8xf32>, %mask: tensor<6xi1>)
// OUT-NEXT:    %0 = dycl.call_module "fc"(%idx) {dycl.data_dependent_shape} : (tensor<?x1xi64>) -> tensor<?x8xf32>
// OUT-NEXT:    %rows = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape}
// OUT-NEXT:    %th = dycl.call_function "torch.tanh"(%rows)
// OUT-NEXT:    %1 = dycl.call_function "dycl.tensor_ops.setitem"(%x, %mask, %th)
func.func @forward(%x: tensor<6x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<6x8xf32>) {
  %m1 = arith.constant -1 : i64
  %z = arith.constant 0 : i64
  %rsum = dycl.call_method "sum"(%x, %m1) : (tensor<6x8xf32>, i64) -> tensor<6xf32>
  %mask = dycl.call_function "_operator.gt"(%rsum, %z) : (tensor<6xf32>, i64) -> tensor<6xi1>
  %sel = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape} : (tensor<6x8xf32>, tensor<6xi1>) -> tensor<?x8xf32>
  %t = dycl.call_function "torch.tanh"(%sel) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %idx = dycl.call_method "nonzero"(%mask) {dycl.data_dependent_shape} : (tensor<6xi1>) -> tensor<?x1xi64>
  %m = dycl.call_module "fc"(%idx) {dycl.data_dependent_shape} : (tensor<?x1xi64>) -> tensor<?x8xf32>
  %rows = dycl.call_function "_operator.getitem"(%x, %mask) {dycl.data_dependent_shape} : (tensor<6x8xf32>, tensor<6xi1>) -> tensor<?x8xf32>
  %th = dycl.call_function "torch.tanh"(%rows) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %upd = dycl.call_function "dycl.tensor_ops.setitem"(%x, %mask, %th) : (tensor<6x8xf32>, tensor<6xi1>, tensor<?x8xf32>) -> tensor<6x8xf32>
  dycl.return %t, %m, %upd : tensor<?x8xf32>, tensor<?x8xf32>, tensor<6x8xf32>
}
