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
    stay whole: the host runs no submodule), and the values such an op produces
    reach later sub-DNNs as inputs with their dynamic dimensions.
    """

    name = "cut-data-dependent-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in op.walk():
            if (isinstance(o, (d.CallFunctionOp, d.CallMethodOp)) and d.DATA_DEPENDENT_ATTR in o.attributes
                    and classify(o) == TENSOR):
                o.attributes[d.ON_HOST_ATTR] = UnitAttr()
