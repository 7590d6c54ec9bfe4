"""assign-backends: choose the DL compiler of every sub-DNN ("bring your own codegen")."""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, FloatAttr, ModuleOp, StringAttr, f64
from xdsl.passes import ModulePass

from dycl.backends.verify_build import BuildMismatch, load_built
from dycl.backends.auto import POLICY_VERSION, Choice, cached_choice, candidates_for, decide, interleaved_timings, store_choice
from dycl.backends.base import Target, backend_names, get_backend
from dycl.build_cache import BuildCache, cache_dir, structural_key
from dycl.diagnostics import BackendError, PassError
from dycl.dialects import dycl as d
from dycl.models import model_of

TIMINGS_ATTR = "dycl.timings"
CHOICE_ATTR = "dycl.backend_choice"  # why `auto` chose the backend


def _wait(out: Any) -> None:
    """Wait for a sub-DNN's results, as the host would when it reads them (through
    DLPack, as the host does: `.numpy()` would cost TVM tensors 8-17 us more)."""
    import numpy as np

    if out:
        try:
            np.from_dlpack(out[0])
        except (BufferError, RuntimeError, TypeError, AttributeError, ValueError):
            if hasattr(out[0], "numpy"):
                out[0].numpy()


def median_seconds(run: Any, inputs: list[Any], runs: int) -> float:
    for _ in range(max(3, runs // 10)):
        run(*inputs)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        out = run(*inputs)
        if out and hasattr(out[0], "numpy"):
            out[0].numpy()  # wait for the result, as the host would
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


@dataclass(frozen=True)
class AssignBackendsPass(ModulePass):
    """Annotates every sub-DNN function with `dycl.backend`.

    Expects: the output of outline-subgraphs. With `policy=fixed` every sub-DNN
    gets `backend`. With `policy=auto` (what `dycl.compile` does by default) each
    sub-DNN gets the fastest of eager torch, ONNX Runtime and TVM that is faster
    by a clear margin in interleaved timing rounds, else the cheapest to build
    (see dycl/backends/auto.py); `dycl.backend_choice` says why. With `policy=fastest` each sub-DNN is built by every backend in
    `candidates` and run on inputs of its real shapes (`runs` timed calls, median);
    the fastest wins, and `dycl.timings` records the medians in seconds. Builds go
    through the build cache (so the final build reuses them) and measurements are
    cached on disk under the same key. A candidate that cannot build the sub-DNN
    is skipped. Measuring needs the target's device: `fastest` is for llvm here.

    Options: `policy` (fixed|auto|fastest), `backend`, `candidates` (comma-separated),
    `target` (llvm|cuda), `arch`, `runs`, `model` (as for shape-inference),
    `jobs` (auto: candidates built that many at once, in worker processes).
    """

    name = "assign-backends"

    policy: str = "fixed"
    backend: str = "tvm"
    candidates: str = "tvm,onnxruntime,torch"
    target: str = "llvm"
    arch: str = ""
    runs: int = 30
    model: str | None = None
    jobs: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        subs = [f for f in op.ops if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR in f.attributes]
        if self.policy == "fixed":
            get_backend(self.backend)
            for f in subs:
                f.attributes[d.BACKEND_ATTR] = StringAttr(self.backend)
            return
        if self.policy == "auto":
            self._apply_auto(op, subs)
            return
        if self.policy != "fastest":
            raise PassError(f"assign-backends: unknown policy '{self.policy}' (fixed, auto or fastest)")
        target = Target.parse(self.target, self.arch or None)
        if target.kind != "llvm":
            raise PassError("assign-backends{policy=fastest} measures on this machine: use target=llvm")
        names = [c for c in self.candidates.split(",") if c]
        unknown = set(names) - set(backend_names())
        if unknown:
            raise PassError(f"assign-backends: unknown backends {sorted(unknown)}")
        model = model_of(op, self.model)
        cache = BuildCache()
        with tempfile.TemporaryDirectory(prefix="dycl-measure-") as tmp:
            for f in subs:
                timings = self._measure(f, model, names, target, cache, Path(tmp))
                if not timings:
                    raise PassError(f"no backend could build sub-DNN @{f.sym_name.data}", f)
                best = min(timings, key=timings.__getitem__)
                f.attributes[d.BACKEND_ATTR] = StringAttr(best)
                f.attributes[TIMINGS_ATTR] = DictionaryAttr({k: FloatAttr(v, f64) for k, v in timings.items()})

    def _apply_auto(self, op: ModuleOp, subs: list[func.FuncOp]) -> None:
        target = Target.parse(self.target, self.arch or None)
        model = model_of(op, self.model)
        cache = BuildCache()
        with tempfile.TemporaryDirectory(prefix="dycl-measure-") as tmp:
            failed = self._build_candidates(subs, model, target, cache, Path(tmp)) if self.jobs > 1 else {}
            for f in subs:
                choice = self._auto_choice(f, model, target, cache, Path(tmp), failed)
                f.attributes[d.BACKEND_ATTR] = StringAttr(choice.backend)
                f.attributes[CHOICE_ATTR] = StringAttr(choice.reason)
                f.attributes[TIMINGS_ATTR] = DictionaryAttr(
                    {k: FloatAttr(v * 1e-6, f64) for k, v in choice.timings_us.items()})

    def _build_candidates(self, subs: list[func.FuncOp], model: Any, target: Target, cache: BuildCache,
                          tmp: Path) -> dict[str, str]:
        """The candidate builds that no cached decision or build covers, `jobs` at a
        time (the measuring then finds them in the cache); what failed, by build key."""
        from dycl.fx import subgraph_spec
        from dycl.parallel_build import BuildJob, build_candidates

        items = []
        for f in subs:
            spec = subgraph_spec(f, model)
            names, _ = candidates_for(spec.graph_module, target.kind)
            if len(names) == 1 or self._decided(f, model, target, names)[1] is not None:
                continue
            for name in names:
                if name == "torch":  # nothing to build
                    continue
                backend = get_backend(name)
                key = structural_key(f, model, backend.cache_tag(), target)
                if not cache.has(key):
                    items.append((key, BuildJob(backend, spec, f), _candidate_dir(tmp, f, name)))
        return build_candidates(items, target, cache, self.jobs) if items else {}

    @staticmethod
    def _decided(f: func.FuncOp, model: Any, target: Target, names: list[str]) -> tuple[str, Choice | None]:
        key = structural_key(f, model, f"{POLICY_VERSION}:{','.join(names)}", target)
        cached = cached_choice(key)
        # (a choice naming no candidate is foreign or tampered with: measured again)
        return key, cached if cached is not None and cached.backend in names else None

    def _auto_choice(self, f: func.FuncOp, model: Any, target: Target, cache: BuildCache, tmp: Path,
                     prebuilt_failures: dict[str, str]) -> Choice:
        from dycl.fx import subgraph_spec

        spec = subgraph_spec(f, model)
        names, skipped = candidates_for(spec.graph_module, target.kind)
        if len(names) == 1:
            return Choice(names[0], f"{names[0]}: {skipped}", {})
        key, cached = self._decided(f, model, target, names)
        if cached is not None:
            return cached
        inputs = list(spec.example_inputs)
        runs: dict[str, Any] = {}
        failed: list[str] = []
        for name in names:
            out = _candidate_dir(tmp, f, name)
            backend = get_backend(name)
            why = prebuilt_failures.get(structural_key(f, model, backend.cache_tag(), target)) \
                if prebuilt_failures else None
            if why is not None:  # (built in a worker already, and it failed)
                failed.append(f"{name} failed ({why})")
                continue
            try:
                file = cache.build(backend, spec, f, model, target, out)  # verified there
                run = load_built(name, out, file, target)
            except BuildMismatch as e:
                failed.append(f"{name}: {e.message}")
                continue
            except Exception as e:  # this candidate cannot take the sub-DNN: the others can
                failed.append(f"{name} failed ({type(e).__name__})")
                continue
            runs[name] = run
        if not runs:
            raise PassError(f"no backend could build sub-DNN @{f.sym_name.data}: {', '.join(failed)}", f)
        timeable = {n: run for n, run in runs.items() if _runs_on(run, inputs)}
        if not timeable:
            # Example inputs the sub-DNN does not take (a size passed as a number next to a
            # tensor resized for a symbolic dimension): every build was checked on inputs
            # that fit; the first candidate, untimed and not remembered.
            name = next(iter(runs))
            return Choice(name, f"{name}: not timed (the example inputs do not fit together)", {})
        choice = decide(interleaved_timings({n: (lambda run=run: _wait(run(*inputs))) for n, run in timeable.items()}))
        notes = [n for n in (skipped, *failed) if n]
        if notes:
            choice.reason += f"; {'; '.join(notes)}"
        store_choice(key, choice)
        return choice

    def _measure(self, f: func.FuncOp, model: Any, names: list[str], target: Target, cache: BuildCache,
                 tmp: Path) -> dict[str, float]:
        from dycl.fx import subgraph_spec

        timings: dict[str, float] = {}
        spec = subgraph_spec(f, model)
        for name in names:
            key = structural_key(f, model, name, target)
            stored = _timing_file(key)
            if stored is not None and stored.exists():
                try:
                    timings[name] = float(stored.read_text())
                    continue
                except ValueError:  # a torn record: measure again
                    stored.unlink(missing_ok=True)
            out = tmp / name
            out.mkdir(exist_ok=True)
            try:
                file = cache.build(get_backend(name), spec, f, model, target, out)
            except BackendError:
                continue
            run = load_built(name, out, file, target)
            timings[name] = median_seconds(run, list(spec.example_inputs), self.runs)
            if stored is not None:
                stored.parent.mkdir(parents=True, exist_ok=True)
                tmp_file = stored.with_suffix(f".{os.getpid()}.tmp")
                tmp_file.write_text(f"{timings[name]!r}\n")
                tmp_file.replace(stored)
        return timings


def _candidate_dir(tmp: Path, f: func.FuncOp, backend: str) -> Path:
    out = tmp / f"{f.sym_name.data}-{backend}"
    out.mkdir(exist_ok=True)
    return out


def _timing_file(key: str) -> Path | None:
    root = cache_dir()
    return None if root is None else root / "timings" / f"{key}.txt"


def _runs_on(run: Any, inputs: list[Any]) -> bool:
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # (FX prints a failing call's traceback itself)
            _wait(run(*inputs))
        return True
    except Exception:  # noqa: BLE001 (a candidate that cannot be timed on these inputs is not chosen by time)
        return False
