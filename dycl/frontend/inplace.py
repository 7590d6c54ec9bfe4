"""Augmented assignment on tensors: `h += e` updates `h`'s storage in place.

The compiled program is functional, so the frontend rebinds every name that
holds the same tensor to the updated value. Names that hold a *view* of it
(`y = h[0]`, `h.view(...)`) would change too in eager PyTorch, and that cannot
be expressed by rebinding: such programs are rejected.
"""

from __future__ import annotations

from collections.abc import Iterator

from torch import nn
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from dycl.dialects import dycl as d
from dycl.frontend.values import SeqVal, Value

# Ops whose result may share storage with their first operand.
_VIEW_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "t",
    "expand", "expand_as", "narrow", "select", "unfold", "split", "chunk", "unbind", "detach", "movedim",
    "swapaxes", "diagonal", "contiguous", "to", "float", "type_as", "__getitem__",
    # The same tensor when it already has that dtype or device (`mask.long()` of int64).
    "long", "int", "bool", "double", "half", "bfloat16", "short", "char", "byte", "type", "cpu", "cuda",
    "ravel", "unflatten", "as_strided", "swapdims", "moveaxis", "adjoint", "split_with_sizes", "tensor_split",
    "hsplit", "vsplit", "dsplit", "requires_grad_", "resolve_conj", "resolve_neg", "conj", "positive",
    "sum_to_size", "real", "imag", "view_as_real", "view_as_complex", "as_subclass", "rename", "align_as",
    "align_to", "refine_names", "detach_", "numpy",
})
_VIEW_FUNCTIONS = frozenset({
    "torch.reshape", "torch.flatten", "torch.squeeze", "torch.unsqueeze", "torch.transpose", "torch.permute",
    "torch.narrow", "torch.select", "torch.split", "torch.chunk", "torch.unbind", "torch.t", "torch.movedim",
    "torch.detach", "_operator.getitem", "torch.nn.functional.dropout",
    "torch.as_tensor", "torch.asarray", "torch.broadcast_to", "torch.ravel", "torch.swapaxes", "torch.swapdims",
    "torch.moveaxis", "torch.diagonal", "torch.unflatten", "torch.as_strided", "torch.adjoint", "torch.conj",
    "torch.positive", "torch.tensor_split", "torch.hsplit", "torch.vsplit", "torch.dsplit", "torch.atleast_1d",
    "torch.atleast_2d", "torch.atleast_3d", "torch.view_as_real", "torch.view_as_complex",
    "torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d",
    "torch.nn.functional.alpha_dropout", "torch.nn.functional.feature_alpha_dropout",
    "builtins.getattr",  # x.T, x.mT, x.data
    "torch.real", "torch.imag", "_operator.pos", "torch.dropout", "torch.alpha_dropout", "torch.feature_dropout",
    "torch.feature_alpha_dropout", "torch.from_numpy",
    "torch.broadcast_tensors", "torch.functional.broadcast_tensors", "torch.meshgrid", "torch.functional.meshgrid",
    "torch.functional.split", "torch.unsafe_chunk", "torch.unsafe_split", "torch.split_with_sizes",
    "torch.unsafe_split_with_sizes",
    # Of one operand, a view for a pure permutation or diagonal ('ij->ji'), a new tensor
    # otherwise: taken as one, so an in-place write through it that other names could see
    # is refused (runs as Python). Of two or more, always a new tensor (_einsum_of_many).
    "torch.einsum", "torch.functional.einsum",
    # A tensor's rows: list(y), tuple(y), iter(y), next(...) of it, `for r in y` (dycl.tensor_ops.row).
    "builtins.list", "builtins.tuple", "builtins.iter", "builtins.next", "builtins.reversed", "dycl.tensor_ops.row",
    "dycl.tensor_ops.unpack",
})


def _is_view_function(target: str) -> bool:
    """`torch.Tensor.detach(y)`: a view method called through the class counts too."""
    return target in _VIEW_FUNCTIONS or (target.startswith("torch.Tensor.") and target[13:] in _VIEW_METHODS)


_VIEW_MODULES = (nn.Identity, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.Flatten, nn.Unflatten)


def maybe_tensor(v: Value) -> bool:
    """Whether `v` may be a tensor at run time (Python numbers are immutable)."""
    return isinstance(v, SSAValue) and (d.is_tensor_type(v.type) or v.type == d.ANY)


_CONTAINER_BUILTINS = {"builtins.list", "builtins.tuple", "builtins.dict", "builtins.set", "builtins.sorted"}


def python_container(v: SSAValue) -> bool:
    """Whether `v` is a container `list(...)` made (its items edited since or not):
    no tensor, though its type is known only after translation."""
    while isinstance(owner := v.owner, d.CallFunctionOp) and owner.target.data == "dycl.tensor_ops.setitem":
        v = owner.operands[0]
    return isinstance(owner, d.CallFunctionOp) and owner.target.data in _CONTAINER_BUILTINS


def host_list(v: SSAValue) -> bool:
    """A list the host holds (`list(...)`, `t.tolist()`): unpacking it checks its length."""
    return isinstance(v.type, d.ListType) or python_container(v) or (
        isinstance(v.owner, d.CallMethodOp) and v.owner.method.data == "tolist")


def storage_root(v: SSAValue, model: nn.Module) -> SSAValue:
    """The value whose storage `v` may view (`v` itself when it owns its storage)."""
    while isinstance(owner := v.owner, Operation) and owner.operands:
        if isinstance(owner, d.GetItemOp):
            src = owner.operands[0].owner
            if isinstance(src, d.MakeTupleOp):
                v = src.elements[owner.index.value.data]  # the element itself
            elif _is_view(src, model):
                v = owner.operands[0]  # an element of a split/chunk/unbind result
            else:
                break  # an output of topk, max(dim), an LSTM...: its own storage
        elif isinstance(owner, d.CallMethodOp) and owner.method.data in _VIEW_METHODS:
            v = owner.operands[0]
        elif isinstance(owner, d.CallFunctionOp) and owner.target.data == "builtins.getattr" and \
                _attribute_name(owner) in _NO_STORAGE_ATTRIBUTES:
            break  # `x.shape[-2]`: a Python int, no view of x
        elif isinstance(owner, d.CallFunctionOp) and _is_view_function(owner.target.data) and \
                not _einsum_of_many(owner):
            # (the first tensor: einsum's equation comes first)
            v = next((o for o in owner.operands if not isinstance(o.type, d.PyObjType)), owner.operands[0])
        elif isinstance(owner, d.CallModuleOp) and isinstance(model.get_submodule(owner.path.data), _VIEW_MODULES):
            v = owner.operands[0]
        else:
            break
    return v


_NO_STORAGE_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda"})


def _attribute_name(op: d.CallFunctionOp) -> str | None:
    """The constant name `getattr(x, name)` reads."""
    name = op.operands[1].owner if len(op.operands) > 1 else None
    value = name.value if isinstance(name, d.ConstantOp) else None
    return value.data if isinstance(value, StringAttr) else None


def _is_view(op: object, model: nn.Module) -> bool:
    return (isinstance(op, d.CallMethodOp) and op.method.data in _VIEW_METHODS) or (
        isinstance(op, d.CallFunctionOp) and _is_view_function(op.target.data) and not _einsum_of_many(op))


def _einsum_of_many(op: d.CallFunctionOp) -> bool:
    """`torch.einsum("se,se->s", a, b)` (or of a list of two): a product, computed
    into a new tensor."""
    if op.target.data not in ("torch.einsum", "torch.functional.einsum"):
        return False
    tensors = [o for o in op.operands if not isinstance(o.type, d.PyObjType)]
    listed = [o for o in op.operands if isinstance(o.owner, d.MakeTupleOp)]
    return len(tensors) > 1 or any(len(o.owner.operands) > 1 for o in listed)  # type: ignore[union-attr]


def possible_roots(v: SSAValue, model: nn.Module, joins: dict[SSAValue, list[SSAValue]]) -> set[SSAValue]:
    """Every storage `v` may share: a `dycl.if` result (`joins` holds what each
    path yields) may be any of its paths' values, so their roots count too."""
    roots: set[SSAValue] = set()
    stack = [v]
    while stack:
        root = storage_root(stack.pop(), model)
        if root not in roots:
            roots.add(root)
            stack.extend(joins.get(root, ()))
            stack.extend(_loop_sources(root))
    return roots


def _loop_sources(v: SSAValue) -> list[SSAValue]:
    """A loop's k-th result or carried block argument may be its k-th initial value
    or what any iteration yields or breaks with (`y = x` inside a loop aliases x)."""
    if isinstance(v, BlockArgument):
        loop = v.block.parent_op()
        if not isinstance(loop, (d.ForOp, d.WhileOp)):
            return []
        k = v.index - (1 if isinstance(loop, d.ForOp) else 0)  # a for body's first argument is the index
        if k < 0:
            return []
    elif isinstance(v.owner, (d.ForOp, d.WhileOp)):
        loop, k = v.owner, v.index
    else:
        return []
    sources = [loop.iter_args[k]] if k < len(loop.iter_args) else []
    stack = list(loop.body.block.ops)
    while stack:
        op = stack.pop()
        if isinstance(op, (d.YieldOp, d.BreakOp)) and op.parent_op() is not None and (
                op.parent_op() is loop or isinstance(op, d.BreakOp)) and k < len(op.operands):
            sources.append(op.operands[k])
        if not isinstance(op, (d.ForOp, d.WhileOp)):  # a nested loop's yields and breaks are its own
            stack.extend(o for r in op.regions for b in r.blocks for o in b.ops)
    return sources


def bound_values(env: dict[str, Value]) -> Iterator[tuple[str, SSAValue]]:
    """Every (name, SSA value) an environment holds, list and tuple elements included."""
    for name, v in env.items():
        stack = [v]
        while stack:
            x = stack.pop()
            if isinstance(x, SSAValue):
                yield name, x
            elif isinstance(x, SeqVal):
                stack.extend(x.items)


def rebind(env: dict[str, Value], old: SSAValue, new: SSAValue) -> None:
    """Every name (and list/tuple element) holding `old` now holds `new`."""
    for name, v in list(env.items()):
        if v is old:
            env[name] = new
        elif isinstance(v, SeqVal):
            _rebind_items(v, old, new)


def _rebind_items(seq: SeqVal, old: SSAValue, new: SSAValue) -> None:
    for i, x in enumerate(seq.items):
        if x is old:
            seq.items[i] = new
        elif isinstance(x, SeqVal):
            _rebind_items(x, old, new)
