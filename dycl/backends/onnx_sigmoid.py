"""Sigmoid as eager computes it, `1 / (1 + exp(-x))`, in ONNX Runtime graphs.

ONNX Runtime's CPU Sigmoid kernel (a clamped approximation) gives 8.9e-8 at x = -17,
where torch gives 4.1e-8, and exactly 0 from x = -18 on, where torch gives
1.5e-8 ... 6e-39: a difference below any tolerance on its own, but `1 / p`,
`log(p)` or a ratio after it turns it into inf or -inf (PonderNet's expected steps,
`int(1 / sigmoid(x).mean())`, raised OverflowError). Each float32/float64 Sigmoid
becomes Neg, Exp, Add, Reciprocal, whose kernels are exact to the last ulp range
torch covers (float16/bfloat16 stay: eager computes them in float32).
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper, numpy_helper

_EXACT = {TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64"}


def exact_sigmoid(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with each float32/float64 Sigmoid written out (unchanged when it has none)."""
    graph = model.graph
    if not any(n.op_type == "Sigmoid" for n in graph.node):
        return model
    import numpy as np

    inferred = onnx.shape_inference.infer_shapes(model)
    infos = (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output)
    types = {v.name: v.type.tensor_type.elem_type for v in infos}
    types.update({t.name: t.data_type for t in graph.initializer})
    nodes: list[onnx.NodeProto] = []
    ones: dict[int, str] = {}
    for k, node in enumerate(graph.node):
        dtype = types.get(node.input[0]) if node.op_type == "Sigmoid" else None
        if dtype not in _EXACT:
            nodes.append(node)
            continue
        if dtype not in ones:
            ones[dtype] = f"dycl_sigmoid_one_{_EXACT[dtype]}"
            graph.initializer.append(numpy_helper.from_array(np.array(1, dtype=_EXACT[dtype]), ones[dtype]))
        x, y, tag = node.input[0], node.output[0], f"dycl_sigmoid_{k}"
        nodes += [helper.make_node("Neg", [x], [f"{tag}_neg"]),
                  helper.make_node("Exp", [f"{tag}_neg"], [f"{tag}_exp"]),
                  helper.make_node("Add", [f"{tag}_exp", ones[dtype]], [f"{tag}_den"]),
                  helper.make_node("Reciprocal", [f"{tag}_den"], [y])]
    del graph.node[:]
    graph.node.extend(nodes)
    return model
