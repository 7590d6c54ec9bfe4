"""cut-data-dependent-shapes: run the ops whose output size depends on data on the host.

`nonzero`, `torch.where(mask)`, `x[mask]`, `masked_select`: the number of rows
they return is known only once the values are. Some DL compilers cannot build
them at all (TVM Relax imports no `nonzero`, and no boolean-mask indexing), so a
sub-DNN holding one would fall back whole to another backend. This pass takes
each such op out of the tensor work: the host runs it with torch, `extract-hcfg`
cuts the sub-DNN there, and the sub-DNNs after it take inputs with a dynamic
dimension (`?`), which the backends build for any size.

Backends that compile these ops themselves (ONNX Runtime, Inductor, torch) are
better served by whole sub-DNNs: `dycl.compile` adds this pass only for a backend
that needs it (see `Backend.data_dependent_shapes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from dycl.classify import TENSOR, classify
from dycl.dialects import dycl as d


@dataclass(frozen=True)
class CutDataDependentShapesPass(ModulePass):
    """Mark every function or method call whose result size depends on its inputs'
    values (`dycl.data_dependent_shape`, set by `shape-inference`) to run on the
    host (`dycl.on_host`), so that sub-DNNs are cut there.

    Expects: typed dycl IR (after `shape-inference`), before `extract-hcfg`.
    Guarantees: no tensor region formed afterwards holds an op marked
    `dycl.data_dependent_shape`, except submodule calls (`dycl.call_module`, which
    stay whole: the host runs no submodule) and ops whose results are written back
    into a tensor through an index (`out[mask] = f(x[mask])`: the count of values
    must match the count of places, which only the whole graph knows); the values
    a cut op produces reach later sub-DNNs as inputs with their dynamic dimensions.
    """

    name = "cut-data-dependent-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in op.walk():
            if (isinstance(o, (d.CallFunctionOp, d.CallMethodOp)) and d.DATA_DEPENDENT_ATTR in o.attributes
                    and classify(o) == TENSOR and not _assigned_back(o)):
                o.attributes[d.ON_HOST_ATTR] = UnitAttr()


# Writes of values into a tensor through an index (`out[mask] = f(x[mask])`).
_ASSIGNS = {"dycl.tensor_ops.setitem", "index_put", "index_put_", "masked_scatter", "masked_scatter_"}


def _assigned_back(op: Operation) -> bool:
    """Whether what `op` computes is written back through an index: the number of
    values must equal the number of places, which only the whole graph knows (a
    sub-DNN cut there is traced assuming more than one row, and refuses one)."""
    seen: set[int] = set()
    work = list(op.results)
    while work:
        v = work.pop()
        for use in v.uses:
            user = use.operation
            if id(user) in seen:
                continue
            seen.add(id(user))
            name = user.target.data if isinstance(user, d.CallFunctionOp) else (
                user.method.data if isinstance(user, d.CallMethodOp) else "")
            if name in _ASSIGNS:
                return True
            if classify(user) == TENSOR:
                work.extend(user.results)
    return False
