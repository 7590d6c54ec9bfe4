"""NaN through ONNX Runtime's max kernels, as eager torch propagates it.

ONNX Runtime's MaxPool, ReduceMax/ReduceMin and ArgMax/ArgMin skip NaN (a window or
row holding one gives the largest other value, or its index); torch gives NaN, and
the index of the first NaN. (MaxPool also gives the lowest finite value, not -inf,
for a window of -inf.) Each such node of an exported graph gets a NaN mask
reduced the same way beside it, and a `Where` that puts NaN (or the first NaN's
index) where the mask says a NaN was seen. Standard ops only: ORT still fuses and
runs its own kernels, so the cost is a mask pass over the node's input.
"""

from __future__ import annotations

import itertools

import onnx
from onnx import TensorProto, helper

_FLOATS = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}
_VALUES = {"MaxPool", "ReduceMax", "ReduceMin"}
_INDICES = {"ArgMax", "ArgMin"}


def keep_nan(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with its NaN-dropping nodes wrapped (unchanged when it has none)."""
    graph = model.graph
    if not any(n.op_type in _VALUES | _INDICES for n in graph.node):
        return model
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type
             for v in (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output)}
    types.update({t.name: t.data_type for t in graph.initializer})
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    ids = itertools.count()
    nodes: list[onnx.NodeProto] = []

    def emit(op: str, inputs: list[str], **attrs) -> str:
        out = f"dycl_nan_{next(ids)}_{op}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    for node in graph.node:
        x = node.input[0] if node.input else ""
        dtype = types.get(x)
        if node.op_type not in _VALUES | _INDICES or dtype not in _FLOATS or len(node.output) != 1:
            nodes.append(node)
            continue
        mask = emit("Cast", [emit("IsNaN", [x])], to=dtype)
        result = node.output[0]
        node.output[0] = f"dycl_nan_{next(ids)}_raw"
        nodes.append(node)
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        raw = node.output[0]
        if node.op_type == "MaxPool":
            seen = emit("MaxPool", [mask], **attrs)
            # Its windows also start from the lowest finite value: one of only -inf
            # (and padding) gives that, not -inf.
            above = emit("Cast", [emit("Not", [emit("IsInf", [x], detect_positive=0)])], to=dtype)
            empty = emit("Not", [emit("Cast", [emit("MaxPool", [above], **attrs)], to=TensorProto.BOOL)])
            minus_inf = emit("Constant", [], value=helper.make_tensor("ninf", dtype, [], [float("-inf")]))
            raw = emit("Where", [empty, minus_inf, raw])
        elif node.op_type in _VALUES:  # ReduceMax/ReduceMin: the mask's max, over the same axes
            seen = emit("ReduceMax", [mask, *node.input[1:]], **attrs)
        else:
            axis, keepdims = attrs.get("axis", 0), attrs.get("keepdims", 1)
            if opset >= 18:
                axes = emit("Constant", [], value=helper.make_tensor("axes", TensorProto.INT64, [1], [axis]))
                seen = emit("ReduceMax", [mask, axes], keepdims=keepdims)
            else:
                seen = emit("ReduceMax", [mask], axes=[axis], keepdims=keepdims)
        flag = emit("Cast", [seen], to=TensorProto.BOOL)
        if node.op_type in _VALUES:
            fill = emit("Constant", [], value=helper.make_tensor("nan", dtype, [], [float("nan")]))
        else:  # the first NaN's index, as torch picks it
            fill = emit("ArgMax", [mask], axis=attrs.get("axis", 0), keepdims=attrs.get("keepdims", 1),
                        select_last_index=0)
        nodes.append(helper.make_node("Where", [flag, fill, raw], [result]))
    del graph.node[:]
    graph.node.extend(nodes)
    return model
