// RUN: dycl import %S/inputs/star_args.py:make --input 1x4xf32 --input 1x4xf32 --input 1x4xf32 | filecheck %s

// forward(self, x, /, *rest, **options): `rest` is the tuple of the inputs past the
// named ones (its loop unrolls over them, `len(rest)` is 2), `options` an empty dict
// (`options.get("scale", 2.0)` is the default).

// CHECK-LABEL: func.func @forward(%x: tensor<1x4xf32>, %rest0: tensor<1x4xf32>, %rest1: tensor<1x4xf32>)
// CHECK:         %h = dycl.call_module "fc"(%x)
// CHECK-NEXT:    dycl.call_function "_operator.add"(%h, %rest0)
// CHECK-NEXT:    dycl.call_function "_operator.add"(%h_1, %rest1)
// CHECK-NEXT:    arith.constant 2.000000e+00 : f64
// CHECK:         arith.constant 2 : i64
// CHECK-NEXT:    dycl.make_tuple
