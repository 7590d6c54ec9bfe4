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


# Inputs at least this large take the exact path only when they hold a NaN or an
# infinity (an `If` on one ReduceSum over the input): on a 16x32x32 map the exact
# MaxPool took 36 us, plain 12 us, the guarded one 15 us. Smaller ones always take
# it (the If costs ~3 us, more than the mask pass there).
GUARD_MIN_ELEMENTS = 4096


def keep_nan(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with its NaN-dropping nodes wrapped (unchanged when it has none)."""
    graph = model.graph
    if not any(n.op_type in _VALUES | _INDICES for n in graph.node):
        return model
    inferred = onnx.shape_inference.infer_shapes(model)
    infos = (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output)
    types = {v.name: v.type.tensor_type.elem_type for v in infos}
    types.update({t.name: t.data_type for t in graph.initializer})
    sizes = {v.name: _elements(v) for v in infos}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    ids = itertools.count()
    nodes: list[onnx.NodeProto] = []

    def fresh(what: str) -> str:
        return f"dycl_nan_{next(ids)}_{what}"

    for node in graph.node:
        x = node.input[0] if node.input else ""
        dtype = types.get(x)
        if node.op_type not in _VALUES | _INDICES or dtype not in _FLOATS or len(node.output) != 1:
            nodes.append(node)
            continue
        result = node.output[0]
        if (sizes.get(x) or 0) < GUARD_MIN_ELEMENTS:
            nodes.extend(_exact(node, x, dtype, result, opset, fresh))
            continue
        # if not isfinite(sum(x)): the exact nodes, else the node as it is.
        total = fresh("sum")
        nodes.append(helper.make_node("ReduceSum", [x], [total], keepdims=0))
        special = fresh("special")
        nodes.append(helper.make_node("Or", [_one(nodes, "IsNaN", total, fresh), _one(nodes, "IsInf", total, fresh)],
                                      [special]))
        exact_out, plain_out = fresh("exact"), fresh("plain")
        plain = onnx.NodeProto()
        plain.CopyFrom(node)
        plain.output[0] = plain_out
        out_type = result_type(node, dtype)
        then_branch = helper.make_graph(_exact(node, x, dtype, exact_out, opset, fresh), fresh("then"), [],
                                        [helper.make_tensor_value_info(exact_out, out_type, None)])
        else_branch = helper.make_graph([plain], fresh("else"), [],
                                        [helper.make_tensor_value_info(plain_out, out_type, None)])
        nodes.append(helper.make_node("If", [special], [result], then_branch=then_branch, else_branch=else_branch))
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def result_type(node: onnx.NodeProto, dtype: int) -> int:
    return TensorProto.INT64 if node.op_type in _INDICES else dtype


def _one(nodes: list[onnx.NodeProto], op: str, x: str, fresh) -> str:
    out = fresh(op)
    nodes.append(helper.make_node(op, [x], [out]))
    return out


def _elements(info: onnx.ValueInfoProto) -> int | None:
    dims = info.type.tensor_type.shape.dim
    if not info.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
        return None  # unknown (a dynamic dimension): the exact nodes, which always hold
    n = 1
    for d in dims:
        n *= d.dim_value
    return n


def _exact(node: onnx.NodeProto, x: str, dtype: int, result: str, opset: int, fresh) -> list[onnx.NodeProto]:
    """`node` writing `result` as eager torch would: NaN (or the first NaN's index)
    where its input's window or row holds a NaN; -inf for MaxPool windows of -inf."""
    nodes: list[onnx.NodeProto] = []

    def emit(op: str, inputs: list[str], **attrs) -> str:
        out = fresh(op)
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    mask = emit("Cast", [emit("IsNaN", [x])], to=dtype)
    original = node
    node = onnx.NodeProto()
    node.CopyFrom(original)
    node.output[0] = fresh("raw")
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
    return nodes
