"""MetaSchedule tuning for the TVM backend, with a persistent database per target.

Tuning tasks are the fused TIR functions of a sub-DNN. A task whose workload
already has records in the database (tuned for another sub-DNN of this compile,
or by an earlier compile) is not tuned again: repeated blocks and recompiles
cost nothing, and identical workloads across sub-DNNs are tuned once.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import inspect
import logging
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dycl.backends.base import BuildOptions
from dycl.build_cache import cache_dir


@dataclass
class TuningStats:
    tasks: int = 0  # fused TIR functions in the sub-DNN
    tuned: int = 0  # of which were tuned now (the rest were in the database)


def tuning_target(tgt):
    """MetaSchedule's CPU search needs the core count in the target."""
    import tvm

    if tgt.kind.name != "llvm" or "num-cores" in tgt.attrs:
        return tgt
    return tvm.target.Target({**tgt.export(), "num-cores": os.cpu_count() or 1})


@functools.cache
def _private_tuning_dir() -> Path:
    """With the cache off: this process's own directory (0700), gone at exit. A fixed
    path in /tmp would let any local user plant records that later compiles use."""
    path = Path(tempfile.mkdtemp(prefix="dycl-tuning-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def database_dir(options: BuildOptions, tgt) -> Path:
    root = cache_dir()
    base = Path(options.tuning_dir) if options.tuning_dir else root / "tuning" if root else _private_tuning_dir()
    # Records are only valid for the target (CPU model, arch) they were measured on.
    return base / hashlib.sha256(str(tgt).encode()).hexdigest()[:16]


def fuse_for_tuning(mod, tgt):
    """The fused TIR functions, prepared as `compile_relax` prepares them, so the
    database's workload keys match at build time."""
    import tvm
    from tvm import relax
    from tvm.relax import pipeline

    with tgt:
        passes = [
            *pipeline.library_dispatch_passes(tgt),
            relax.transform.LegalizeOps(),
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FoldConstant(),
            relax.transform.FuseOps(),
            relax.transform.FuseTIR(),
        ]
        return tvm.transform.Sequential(passes)(mod)


def _shallow_stack(context: int = 1) -> list[inspect.FrameInfo]:
    """`inspect.stack()` with source lines for the innermost frames only.

    TVMScript's `prim_func` calls `inspect.stack()` for every function it parses,
    and MetaSchedule's first tuning context imports ~500 of them (its tensor
    intrinsics). Each outer frame whose file does not exist (`<frozen importlib>`)
    makes `inspect.getmodule` walk all of `sys.modules`, thousands with torch
    loaded: measured 110 s of a 380 s tuning run. The parser reads the source
    line of the third frame only, and the frame objects of the others."""
    frame = sys._getframe(1)
    infos = []
    while frame is not None:
        if len(infos) < 4:
            info = inspect.getframeinfo(frame, context)
            infos.append(inspect.FrameInfo(frame, *info[:5], positions=info.positions))
        else:
            infos.append(inspect.FrameInfo(frame, frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name,
                                           None, None, positions=None))
        frame = frame.f_back
    return infos


@functools.cache
def _import_tensor_intrinsics() -> None:
    real = inspect.stack
    inspect.stack = _shallow_stack
    try:
        import tvm.s_tir.tensor_intrin  # noqa: F401 (registers them; TuneContext would import it)
    finally:
        inspect.stack = real


def tune_and_compile(mod, tgt, options: BuildOptions):
    """The executable built with tuned schedules, and what tuning did."""
    from tvm.s_tir import meta_schedule as ms

    _import_tensor_intrinsics()

    logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)
    tgt = tuning_target(tgt)
    work_dir = database_dir(options, tgt)
    work_dir.mkdir(parents=True, exist_ok=True)
    db = ms.database.JSONDatabase(work_dir=str(work_dir))
    tasks = ms.relax_integration.extract_tasks(fuse_for_tuning(mod, tgt), tgt)
    # A workload in the database was tuned before, even if no candidate measured
    # valid then (a loaded machine can time them all out): not tuned again.
    new = [t for t in tasks if not db.has_workload(t.dispatched[0])]
    if new:
        contexts, weights = ms.relax_integration.extracted_tasks_to_tune_contexts(new, str(work_dir))
        trials = options.tune_trials
        ms.tune.tune_tasks(
            tasks=contexts,
            task_weights=weights,
            work_dir=str(work_dir),
            max_trials_global=trials * len(contexts),
            max_trials_per_task=trials,
            num_trials_per_iter=min(64, trials),
            database=db,
        )
    ex = ms.relax_integration.compile_relax(db, mod, tgt, None)
    return ex, TuningStats(len(tasks), len(new))
