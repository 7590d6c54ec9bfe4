"""The Inductor backend: torch._inductor's ahead-of-time compiler (AOTInductor).

A sub-DNN is exported and compiled to a `.pt2` package holding a shared library of
generated C++ kernels and its weights; `torch._inductor.aoti_load_package` runs it
(a C++ host can load the same package through AOTIModelPackageLoader, without
Python). Builds take tens of seconds (a C++ compile per sub-DNN), so `auto` does
not try it; ask for it with `backend="inductor"`.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from dycl.backends.base import Backend, SubgraphSpec, Target
from dycl.backends.tvm import export
from dycl.diagnostics import BackendError


class InductorBackend(Backend):
    name = "inductor"
    loader = "dycl.runtime.loaders.inductor:load"
    probes_may_end_the_process = True  # (its index asserts run inside OpenMP: SIGABRT)

    def build(self, spec: SubgraphSpec, target: Target, out_dir: Path) -> str:
        import torch._inductor

        if target.kind != "llvm":
            raise BackendError(f"sub-DNN {spec.name}: the inductor backend builds for the CPU here (target llvm)")
        file = f"{spec.name}.aoti.pt2"
        ep = export(spec, out_dir)
        # Inductor logs its cache and autotuning decisions at WARNING on the root logger.
        quiet = logging.getLogger("torch._inductor")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # Casts round as eager's do (x.half().float(), fake quantisation): not kept in float32.
                torch._inductor.aoti_compile_and_package(ep, package_path=str(out_dir / file),
                                                         inductor_configs={"emulate_precision_casts": True})
        except Exception as e:  # a C++ compile or lowering failure: the chain moves on
            (out_dir / file).unlink(missing_ok=True)
            first = next((line for line in str(e).splitlines() if line.strip()), type(e).__name__)
            raise BackendError(f"Inductor cannot compile sub-DNN {spec.name}: {first}") from None
        finally:
            quiet.setLevel(level)
        return file
