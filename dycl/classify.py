"""Which ops are tensor compute, which run on the host, and which are free constants.

Shared by extract-hcfg, outline-subgraphs and the host code generators.
"""

from __future__ import annotations

import functools
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue

from dycl.dialects import dycl as d
from dycl.pyregion import resolve

TENSOR, HOST, FREE = "tensor", "host", "free"
# Tensor methods whose result is a Python value made from the data: host reads.
PYTHON_VALUE_METHODS = frozenset({"tolist"})

_CALLS = (d.CallModuleOp, d.CallFunctionOp, d.CallMethodOp)
# Python's text of a value (`str(t)`, an f-string's parts): what a tensor holds, read by the host.
TEXT_FUNCTIONS = frozenset({"builtins.str", "builtins.repr", "builtins.ascii", "builtins.format"})
_HOST_WRAPPERS = ("torch.return_types.", "builtins.dict")


@functools.lru_cache(maxsize=None)
def builds_python_object(target: str) -> bool:
    """A call of a Python class that is not torch's (a namedtuple, a dataclass, an
    OrderedDict): it packs results into eager's object, so it runs on the host."""
    if target.startswith(("torch.", "builtins.", "_operator.", "math.")):
        return False
    try:
        obj = resolve(target)
    except Exception:
        return False
    return isinstance(obj, type) and not issubclass(obj, BaseException)


def _tensorish(v: SSAValue) -> bool:
    return d.contains_tensor_type(v.type) or v.type == d.ANY


def is_static_value(v: SSAValue) -> bool:
    """Known at compile time: a constant, or a pure host op over constants."""
    op = v.owner
    return isinstance(op, Operation) and classify(op) == FREE


def _is_shape_object(op: Operation) -> bool:
    """`x.shape` / `x.size()` left after constant propagation (a dimension is dynamic)."""
    if not isinstance(op, (d.CallFunctionOp, d.CallMethodOp)) or op.result.type != d.PYOBJ:
        return False
    if isinstance(op, d.CallMethodOp):
        return op.method.data == "size" and len(op.operands) == 1
    return op.target.data == "builtins.getattr" and len(op.operands) == 2 and _constant_str(op.operands[1]) == "shape"


def _constant_str(v: Any) -> str | None:
    owner = v.owner
    if isinstance(owner, d.ConstantOp) and isinstance(owner.value, StringAttr):
        return owner.value.data
    return None


_SIZE_ARITHMETIC = frozenset({"_operator.getitem", "_operator.add"})


def _is_size_op(op: Operation) -> bool:
    return _is_shape_object(op) or (isinstance(op, d.CallFunctionOp) and op.target.data in _SIZE_ARITHMETIC
                                    and op.result.type == d.PYOBJ)


def _made_of_sizes(op: Operation) -> bool:
    """Made from tensors' sizes and constants alone (operands only: no cycles)."""
    if _is_shape_object(op):
        return True
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, Operation) and _is_size_op(owner):
            if not _made_of_sizes(owner):
                return False
        elif not is_static_value(v):
            return False
    return True


def _feeds_tensor_ops(op: Operation) -> bool:
    """Used, in its own block, only by tensor ops or by size arithmetic that is."""
    uses = [u.operation for u in op.results[0].uses]
    return bool(uses) and all(
        user.parent is op.parent and (
            _made_of_sizes(user) and _feeds_tensor_ops(user) if _is_size_op(user)
            else isinstance(user, _CALLS) and any(d.contains_tensor_type(v.type) for v in user.operands))
        for user in uses)


def _size_expression(op: Operation) -> bool:
    """`x.size()[:-1] + (h, d)` with a dynamic dimension: a torch.Size made from the
    sizes of tensors and constants, used only by tensor ops (`t.view(new_shape)`):
    traced inside the sub-DNN, where sizes are symbolic, instead of a Python object
    the host would have to hand in (which no sub-DNN takes)."""
    return _is_size_op(op) and _made_of_sizes(op) and _feeds_tensor_ops(op)


def _item_of_a_host_object(source: SSAValue) -> bool:
    """`source` is a Python object the host makes at run time (a loop's or a
    branch's tuple), not a module's result (whose tensors a sub-DNN may take)."""
    owner = source.owner
    return source.type == d.PYOBJ and isinstance(owner, (d.ForOp, d.WhileOp, d.IfOp, d.PyRegionOp)) and \
        not is_static_value(source)


def classify(op: Operation) -> str:
    if isinstance(op, arith.ConstantOp):
        return FREE
    if _size_expression(op):
        return TENSOR
    if isinstance(op, d.ConstantOp):
        return TENSOR if d.is_tensor_type(op.result.type) else FREE
    if isinstance(op, d.ParamOp):
        return TENSOR
    if isinstance(op, d.CallFunctionOp) and (op.target.data.startswith(_HOST_WRAPPERS)
                                             or builds_python_object(op.target.data)
                                             or (op.result.type == d.PYOBJ and op.target.data.startswith(
                                                 "_operator.") and not all(is_static_value(v) for v in op.operands))):
        # tuple + tuple of run-time values: host plumbing (of constants, `x.size()[:-1] + (h, d)`: known)
        return HOST  # named tuples, dicts, output objects of results: host plumbing, like a tuple
    if _is_shape_object(op):
        return HOST
    if isinstance(op, d.CallFunctionOp) and op.target.data in TEXT_FUNCTIONS and op.result.type == d.PYOBJ and \
            not all(is_static_value(v) for v in op.operands):
        return HOST
    if isinstance(op, d.CallMethodOp) and op.method.data in PYTHON_VALUE_METHODS:
        return HOST  # `lengths = mask.sum(1).tolist()`: a Python list, read on the host
    if d.ON_HOST_ATTR in op.attributes:
        return HOST  # cut out of its sub-DNN: the host runs it with torch  # `x.shape` of a dynamic dimension: a torch.Size the host reads off the tensor
    if isinstance(op, d.CallFunctionOp) and op.target.data == "_operator.getitem" and \
            _item_of_a_host_object(op.operands[0]):
        return HOST  # `ret[0]` of a tuple a host loop carried: the host hands the tensor on
    if isinstance(op, _CALLS):
        if isinstance(op, d.CallModuleOp) or any(_tensorish(v) for v in (*op.operands, op.result)):
            return TENSOR
        return FREE if all(is_static_value(v) for v in op.operands) else HOST
    if isinstance(op, d.GetItemOp) and op.source.type == d.PYOBJ and not is_static_value(op.source):
        owner = op.source.owner
        if isinstance(owner, _CALLS) and d.contains_tensor_type(op.result.type) and classify(owner) == TENSOR:
            return TENSOR  # a tensor of a module's result that also holds None (`a, _ = mha(...)`)
        return HOST  # an element of a Python object made at run time (a region's tuple holding a list)
    if isinstance(op, (d.MakeTupleOp, d.GetItemOp)):
        if any(d.contains_tensor_type(v.type) for v in (*op.operands, *op.results)):
            return TENSOR
        return FREE if all(is_static_value(v) for v in op.operands) else HOST
    return HOST
