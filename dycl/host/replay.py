"""Which host ops leave a change the caller sees, for running a call again as eager.

A fallback region's result can differ from what the code after it was compiled for;
the Python host then runs the call again as eager Python where everything done
before is undone by putting back module attributes saved at the call's start.
"""

from __future__ import annotations

from xdsl.ir import Operation

from dycl.classify import builds_python_object
from dycl.dialects import dycl as d
from dycl.region_effects import DRAWS, MUTATING, OTHER

# In an undo list: the global random generators' states (torch's, Python's, numpy's).
RANDOM_STATE = ("", "<random generators>")

# Host calls that change nothing (builtins, math, operator); anything else may.
_PURE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "divmod", "enumerate", "float", "format", "getattr", "hasattr", "hash", "id", "int",
    "isinstance", "issubclass", "len", "list", "max", "min", "pow", "range", "repr", "reversed", "round", "slice",
    "sorted", "str", "sum", "tuple", "type", "zip", "dict", "set", "frozenset", "callable",
})


def host_effect(op: Operation) -> list[tuple[str, str]] | None:
    """The module attributes `op` may change, as (module path, name), or None where
    it may change something saving those cannot undo."""
    if isinstance(op, d.PyRegionOp):
        entries = op.attributes.get(d.EFFECTS_ATTR)
        if entries is None:
            return None  # (shape-inference did not run it: nothing known)
        texts = [e.data for e in entries.data]  # type: ignore[attr-defined]
        if OTHER in texts:
            return None
        return [RANDOM_STATE if t == DRAWS else (t.rpartition(":")[0], t.rpartition(":")[2]) for t in texts]
    if isinstance(op, d.SetAttrOp):
        return None if op.in_place is not None else [(op.module.data, op.attr_name.data)]
    if isinstance(op, d.CallFunctionOp):
        module, _, name = op.target.data.rpartition(".")
        pure = module in ("math", "_operator", "operator") or module == "builtins" and name in _PURE_BUILTINS or \
            module.split(".")[0] == "torch" and not name.endswith("_") and "out" not in op.positional_and_keyword()[1] \
            or builds_python_object(op.target.data)  # (a data holder: an HF ModelOutput)
        return [] if pure else None
    if isinstance(op, d.CallMethodOp):
        name = op.method.data
        return None if name.endswith("_") or name in MUTATING else []
    if isinstance(op, d.ListAppendOp):
        return [] if isinstance(op.source.owner, (d.MakeListOp, d.ListAppendOp)) else None
    return []
