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
import logging
import os
import shutil
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


def tune_and_compile(mod, tgt, options: BuildOptions):
    """The executable built with tuned schedules, and what tuning did."""
    from tvm.s_tir import meta_schedule as ms

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
