"""Whole-program ONNX Runtime: the host program and its sub-DNNs in one session,
where that is faster than the split program.

A program whose host is only sub-DNN calls and branches on their predicates
(`dycl.backends.onnx_program`) is also composed into one ONNX graph with `If`
nodes from each sub-DNN's ONNX Runtime build (verified like every build), and
both are timed on the example inputs the way `auto` times sub-DNNs (interleaved
rounds, a margin in most rounds). The faster one runs; the artifact keeps the
split program (the C++ host and `--explain` read it) and says which ran and why
in `manifest.json` ("whole_program"). The decision is cached like `auto`'s.

`DYCL_WHOLE_PROGRAM`: `auto` (the default: measured), `always` (whenever the
program composes; for tests), `never`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from torch import nn

from dycl.backends import auto
from dycl.backends.base import Target, get_backend
from dycl.backends.onnx_program import NotComposable, check_host_ops, compose
from dycl.build_cache import BuildCache, _versions
from dycl.diagnostics import UsageError
from dycl.printing import module_text

FILE = "program.onnx"
MODES = ("auto", "always", "never")
POLICY_VERSION = "whole-1"


def mode() -> str:
    value = os.environ.get("DYCL_WHOLE_PROGRAM", "auto")
    if value not in MODES:
        raise UsageError(f"DYCL_WHOLE_PROGRAM must be one of {', '.join(MODES)}, got {value!r}")
    return value


def try_whole_program(module: ModuleOp, model: nn.Module, inputs: list[Any], out_dir: Path, target: Target,
                      backend: str, jobs: list[Any], built: dict[str, Any], manifest: dict[str, Any],
                      load_split: Any) -> dict[str, Any] | None:
    """The manifest's "whole_program" entry (with `"used": true` when the composed
    program runs), or None where the program does not compose or is not tried."""
    if mode() == "never" or target.kind != "llvm" or backend not in ("auto", "onnxruntime"):
        return None
    if any(k in manifest for k in ("fallback_model", "layout_sensitive", "mutates_arguments")):
        return None
    if not inputs or not all(isinstance(x, torch.Tensor) and not x.requires_grad for x in inputs):
        return None
    forward = next((f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "forward"), None)
    if forward is None or any((out_dir / (built[j.spec.name].file.split(".", 1)[0] + ".guards.json")).exists()
                              for j in jobs):
        return None  # (sub-DNNs with shape guards: their checks live in the split host)
    if len(forward.body.block.args) != len(inputs):
        return None
    try:
        check_host_ops(forward)  # before building anything for a program that cannot compose
    except NotComposable as e:
        return {"used": False, "why": f"not composed: {e}"}
    scratch = Path(tempfile.mkdtemp(prefix="dycl-whole-"))
    try:
        subs = _onnx_builds(jobs, built, model, target, out_dir, scratch)
        if isinstance(subs, str):
            return {"used": False, "why": f"not composed: {subs}"}
        try:
            program, structure = compose(forward, subs)
        except NotComposable as e:
            return {"used": False, "why": f"not composed: {e}"}
        import onnx

        onnx.save(program, str(out_dir / FILE))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    try:
        entry = _check_and_decide(module, target, out_dir, load_split, list(inputs))
    except Exception as e:  # noqa: BLE001 (an optimisation: whatever fails here leaves the program split)
        entry = {"used": False, "why": f"not used: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    if not entry["used"]:
        (out_dir / FILE).unlink(missing_ok=True)
        return entry
    return {**entry, "structure": structure}


def _check_and_decide(module: ModuleOp, target: Target, out_dir: Path, load_split: Any,
                      args: list[Any]) -> dict[str, Any]:
    """The composed program checked against the split one on the example inputs, then timed against it."""
    from dycl.backends.verify_build import _same, load_built

    whole = load_built("onnxruntime", out_dir, FILE, target)
    split = load_split()
    with torch.no_grad():
        want = torch.utils._pytree.tree_leaves(split(*args))
        got = whole(*args)
    if len(want) != len(got) or not all(_same(torch.as_tensor(w), g) for w, g in zip(want, got)):
        return {"used": False, "why": "the composed program differs from the split one on the example inputs"}
    choice = _decide(module, target, split, whole, args)
    if choice.backend != "whole":
        return {"used": False, "why": choice.reason, "timings_us": choice.timings_us}
    return {"used": True, "file": FILE, "arguments": len(args), "why": choice.reason, "timings_us": choice.timings_us}


def _onnx_builds(jobs: list[Any], built: dict[str, Any], model: nn.Module, target: Target, out_dir: Path,
                 scratch: Path) -> dict[str, Any] | str:
    """Each sub-DNN's verified ONNX Runtime build (the built one, or one through the build
    cache), or why one has none."""
    import onnx

    cache = BuildCache()
    ort = get_backend("onnxruntime")
    subs = {}
    for job in jobs:
        name = job.spec.name
        if built[name].backend == "onnxruntime":
            subs[name] = onnx.load(str(out_dir / built[name].file))
            continue
        try:
            file = cache.build(ort, job.spec, job.fn, model, target, scratch)
        except Exception as e:  # noqa: BLE001 (ONNX Runtime cannot take this sub-DNN: the program stays split)
            return f"{name} has no ONNX Runtime build ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
        subs[name] = onnx.load(str(scratch / file))
    return subs


def _decide(module: ModuleOp, target: Target, split: Any, whole: Any, args: list[Any]) -> auto.Choice:
    if mode() == "always":
        return auto.Choice("whole", "whole program: DYCL_WHOLE_PROGRAM=always", {})
    key = "whole-" + hashlib.sha256(json.dumps([module_text(module), target.to_json(), _versions(),
                                                POLICY_VERSION]).encode()).hexdigest()
    cached = auto.cached_choice(key)
    if cached is not None:
        return cached
    with torch.no_grad():
        samples = auto.interleaved_timings({"split": lambda: split(*args), "whole": lambda: whole(*args)})
    faster, wins = auto.clearly_faster(samples["whole"], samples["split"])
    med = {n: statistics.median(s) for n, s in samples.items()}
    timings = {n: round(m * 1e6, 2) for n, m in med.items()}
    speedup, rounds = med["split"] / med["whole"], len(samples["whole"])
    if faster:
        choice = auto.Choice("whole", f"whole program: {speedup:.2f}x faster than the split host on the example "
                                      f"inputs, in {wins} of {rounds} rounds", timings)
    else:
        choice = auto.Choice("split", f"split host: the whole program was not clearly faster "
                                      f"({speedup:.2f}x, {wins} of {rounds} rounds)", timings)
    auto.store_choice(key, choice)
    return choice

