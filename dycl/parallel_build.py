"""Building the sub-DNNs of one compile: cached, deduplicated, in worker processes.

Each distinct sub-DNN (by build key) is built once; the rest are copies. With
`jobs > 1` the builds run in spawned processes (torch.export and TVM's Python
passes hold the GIL, so threads would not overlap). Tuned TVM builds run one at a
time: MetaSchedule already measures on every core.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
import weakref
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import nn
from tqdm import tqdm
from xdsl.dialects import func

from dycl.backends.base import Backend, BuildOptions, SubgraphSpec, Target, get_backend
from dycl.backends.verify_build import BuildMismatch
from dycl.build_cache import BuildCache
from dycl.diagnostics import BackendError, loc_of


# The chain's notes each model has printed (weakly held: models come and go).
_SAID: weakref.WeakKeyDictionary[nn.Module, set[str]] = weakref.WeakKeyDictionary()


@dataclass
class BuildJob:
    backend: Backend
    spec: SubgraphSpec
    fn: func.FuncOp


@dataclass
class Built:
    backend: str
    file: str
    seconds: float


def build_subgraphs(jobs: list[BuildJob], model: nn.Module, target: Target, out_dir: Path, workers: int = 1,
                    report: Any = None) -> dict[str, Built]:
    """Every job's artifact in `out_dir`, by sub-DNN name."""
    cache = BuildCache()
    results: dict[str, Built] = {}
    pending: dict[str, list[BuildJob]] = {}  # build key → the jobs that share it
    for job in jobs:
        key, file = cache.lookup(job.backend, job.fn, model, target, out_dir, job.spec.name)
        if file is not None:
            results[job.spec.name] = Built(job.backend.name, file, 0.0)
        else:
            pending.setdefault(key, []).append(job)
    outcomes = _run([(group[0], out_dir) for group in pending.values()], target, workers)
    for (key, (first, *rest)), (file, seconds) in zip(pending.items(), outcomes):
        backend = first.backend
        if not file.startswith("error:"):
            file = _checked(backend.name, first.spec, out_dir, file, target)
        if file.startswith("error:"):
            # Down the chain (tvm → onnxruntime → inductor → torch; the eager reference takes
            # any sub-DNN), saying why at each step.
            for fallback in _chain_after(backend.name, target):
                note = (f"{first.spec.name}: {backend.name} cannot compile it ({file.removeprefix('error:')}); "
                        f"trying {fallback}")
                said = _SAID.setdefault(model, set())
                if note not in said:  # (once per model: a compile for new input sizes meets it again)
                    said.add(note)
                    print(f"dycl: note: {note}", file=sys.stderr)
                if report is not None:
                    report.fallbacks.append(note)
                backend = get_backend(fallback)
                start = time.perf_counter()
                try:
                    file = cache.build(backend, first.spec, first.fn, model, target, out_dir)
                except Exception as e:  # noqa: BLE001 (any failure moves down the chain)
                    file = f"error:{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                seconds += time.perf_counter() - start
                if not file.startswith("error:"):
                    break
            else:
                raise _unbuildable(first, file)
        else:
            cache.record(key, out_dir, file)
        results[first.spec.name] = Built(backend.name, file, seconds)
        for job in rest:
            cache.deduplicated += 1
            results[job.spec.name] = Built(backend.name, cache.copy(out_dir, file, out_dir, job.spec.name), 0.0)
    if report is not None:
        report.cache_hits, report.deduplicated = cache.hits, cache.deduplicated
    return results


def _checked(backend: str, spec: SubgraphSpec, out_dir: Path, file: str, target: Target) -> str:
    """`file`, or an error where the build differs from its torch graph on a probe."""
    try:
        BuildCache.verify(backend, spec, out_dir, file, target)
    except BuildMismatch as e:
        return f"error:{e.message}"
    except Exception as e:  # noqa: BLE001 (built, but its runtime cannot load or run it: the chain goes on)
        return f"error:it was built but cannot be loaded or run: {type(e).__name__}: " \
               f"{str(e).splitlines()[0] if str(e) else ''}"
    return file


CHAIN = ("tvm", "onnxruntime", "inductor", "torch")


def _chain_after(name: str, target: Target) -> list[str]:
    """The backends to try after `name` failed: later in CHAIN (torch at least)."""
    rest = list(CHAIN[CHAIN.index(name) + 1:]) if name in CHAIN else ["torch"]
    if target.kind != "llvm":
        rest = [b for b in rest if b not in ("onnxruntime", "inductor")]  # no CUDA builds of these here
    return rest


def _build_one(backend: str, options: BuildOptions, spec: SubgraphSpec, target: Target,
               out_dir: str) -> tuple[str, float]:
    """(file, seconds), or ("error:<message>", seconds) if the backend refused."""
    start = time.perf_counter()
    try:
        file = get_backend(backend, options).build(spec, target, Path(out_dir))
    except BackendError as e:
        file = "error:" + e.message
    except Exception as e:  # noqa: BLE001 (a compiler's internal error: the chain goes on)
        file = f"error:{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return file, time.perf_counter() - start


def build_candidates(items: list[tuple[str, BuildJob, Path]], target: Target, cache: BuildCache,
                     workers: int) -> dict[str, str]:
    """Candidate builds for `assign-backends{policy=auto}`, `workers` at a time:
    each (build key, job, directory) built, checked and recorded in `cache`, where
    the measuring finds it. What failed, by build key (a candidate that cannot
    take its sub-DNN is left out, not replaced down the chain)."""
    failed: dict[str, str] = {}
    outcomes = _run([(job, out) for _, job, out in items], target, workers, "building candidates")
    for (key, job, out), (file, _) in zip(items, outcomes):
        if not file.startswith("error:"):
            file = _checked(job.backend.name, job.spec, out, file, target)
        if file.startswith("error:"):
            failed[key] = file.removeprefix("error:")
        else:
            cache.record(key, out, file)
    return failed


def _run(jobs: list[tuple[BuildJob, Path]], target: Target, workers: int,
         what: str = "building sub-DNNs") -> list[tuple[str, float]]:
    """(file, seconds) of each job, in order: in this process, or in `workers` spawned ones."""
    progress = tqdm(total=len(jobs), desc=what, unit="build", file=sys.stderr,
                    disable=None if len(jobs) > 1 else True)  # None: only on a terminal
    tuned = any(j.backend.options.tune_trials for j, _ in jobs)
    with progress:
        if workers <= 1 or len(jobs) <= 1 or tuned:
            out = []
            for j, directory in jobs:
                out.append(_build_one(j.backend.name, j.backend.options, j.spec, target, str(directory)))
                progress.update()
            return out
        context = multiprocessing.get_context("spawn")  # fork would copy torch's thread pools mid-use
        try:
            with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context) as pool:
                futures = [pool.submit(_build_one, j.backend.name, j.backend.options, j.spec, target, str(directory))
                           for j, directory in jobs]
                for _ in as_completed(futures):
                    progress.update()
                return [f.result() for f in futures]
        except BrokenProcessPool:
            raise BackendError(
                f"a build worker process died (jobs={workers}); workers are spawned, so they import the main "
                "script again: a script that compiles at its top level must guard it with "
                "`if __name__ == \"__main__\":` (or build with jobs=1)") from None


def _unbuildable(job: Any, file: str) -> BackendError:
    """No backend builds the sub-DNN: located at its first op, with every op's place
    (`locs`: the statements a retry runs as Python, the rest of forward compiled)."""
    locs = list(dict.fromkeys(loc for op in job.fn.walk() if op is not job.fn and (loc := loc_of(op)) is not None))
    error = BackendError(f"no backend could build {job.spec.name}: {file.removeprefix('error:')}",
                         locs[0] if locs else None)
    error.locs = locs  # type: ignore[attr-defined]
    return error
