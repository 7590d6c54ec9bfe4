// unbind makes one tensor per row: how many only the size of `b` says.
func.func @forward(%x: tensor<?x8xf32, ["b", ""]>) -> !dycl.any attributes {dycl.signature = "b x 8 x f32"} {
  %z = arith.constant 0 : i64
  %s = dycl.call_method "unbind"(%x, %z) : (tensor<?x8xf32, ["b", ""]>, i64) -> !dycl.any
  dycl.return %s : !dycl.any
}
