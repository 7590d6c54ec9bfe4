"""Benchmark: dycl against PyTorch eager and torch.compile on the example zoo.

    python -m tools.bench [--models early_exit,branchy,...] [--backends auto,tvm,onnxruntime,torch,fastest]
                          [--runs N] [--warmup N] [--target llvm|cuda] [--json out.json] [--no-torch-compile]
                          [--batches 1,8] [--quick] [--markdown out.md] [--chart out.png]
                          [--trace-inputs N] [--hoist-ablation]

For every model in examples/ (or those named) and every path input of its
`branch_inputs()` (the inputs `dycl demo` uses to drive each path), it times
PyTorch eager, torch.compile (default mode) and `dycl.compile(...)` with each
backend: the median of N calls after the warmup calls, under torch.no_grad(),
synchronizing the GPU after each call for `--target cuda`. Every dycl result is
checked against eager (`dycl.demo.max_abs_error`). It also reports each dycl
compile's peak RSS increase and how often `torch.jit.trace` of the model (the
direct-tracing baseline) disagrees with eager on random inputs. All measurements
run in this one process. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psutil
import torch

from dycl.backends.auto import SETTLE_SECONDS
from dycl.demo import TOLERANCE, load_example, max_abs_error, rounding_only
from dycl.tools.path_oracle import PathOracle

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BACKENDS = ("auto", "tvm", "onnxruntime", "inductor", "torch", "fastest", "tvm-tuned")
DEFAULT_BACKENDS = ("auto", "tvm", "onnxruntime", "torch")  # tvm-tuned: MetaSchedule, --tune-trials
CUDA_TOLERANCE = 1e-4  # as tools/gpu_check.py: GPU kernels sum in a different order
TRACE_RTOL, TRACE_ATOL = 1e-4, 1e-5  # a traced output within these of eager's agrees
NO_HOIST = " no-hoist"  # suffix of an implementation compiled with pipeline dycl-no-hoist


def available_models() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def model_path(name: str) -> Path:
    """`branchy` → examples/branchy.py; a path to a .py file is taken as is."""
    path = Path(name) if name.endswith(".py") else EXAMPLES / f"{name}.py"
    if not path.is_file():
        raise SystemExit(f"bench: no model '{name}' (examples: {', '.join(available_models())})")
    return path


def one_line(e: BaseException) -> str:
    """An exception as one line: its type and the first non-blank line of its message."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0][:200]}" if lines else type(e).__name__


def interleaved_ms(fns: dict[str, Callable[[], Any]], runs: int, warmup: int,
                   sync: Callable[[], None], block: int = 5) -> dict[str, float]:
    """Median ms of each implementation, timed round-robin: every round calls each
    `block` times in a row (after one untimed call), in an order that rotates, so a
    noisy neighbour hits all of them alike.

    With more than one torch thread, each block is followed by a pause: torch's
    OpenMP workers spin ~10 ms after a parallel op and would slow whatever is timed
    next (ONNX Runtime 3-4x, measured), charging eager's threads to the other side.
    """
    names = list(fns)
    for _ in range(warmup):
        for n in names:
            fns[n]()
    sync()
    settle = SETTLE_SECONDS if torch.get_num_threads() > 1 else 0.0
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(max(1, -(-runs // block))):
        for n in names[r % len(names):] + names[: r % len(names)]:
            fns[n]()
            sync()
            for _ in range(block):
                start = time.perf_counter()
                fns[n]()
                sync()
                samples[n].append(time.perf_counter() - start)
            if settle:
                time.sleep(settle)
    return {n: statistics.median(v) * 1e3 for n, v in samples.items()}


def to_cpu(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.detach().cpu()
    if isinstance(v, (tuple, list)):
        return type(v)(to_cpu(x) for x in v)
    return v


def error(reference: Any, out: Any) -> float:
    return max_abs_error(to_cpu(reference), to_cpu(out))


def finite(v: Any) -> Any:
    """JSON has no infinity: a non-finite float (a structural mismatch) is written as a string."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    return v


def machine_info(target: str) -> dict[str, Any]:
    info = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }
    if target == "cuda":
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


class PeakRSS:
    """This process's peak RSS over a `with` block less its RSS at the start (`mb`).

    A thread samples RSS every few ms; ru_maxrss alone is the process's lifetime
    peak, which a compile after a bigger one would not move, but when it does move
    it also catches a spike between two samples. Child processes are not counted."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval, self.mb = interval, 0.0
        self._proc = psutil.Process()
        self._stop = threading.Event()

    def __enter__(self) -> PeakRSS:
        self._start = self._peak = self._proc.memory_info().rss
        self._maxrss = _maxrss()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self._peak = max(self._peak, self._proc.memory_info().rss)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        peak = max(self._peak, self._proc.memory_info().rss)
        if _maxrss() > self._maxrss:  # a new lifetime peak: it was reached inside the block
            peak = max(peak, _maxrss())
        self.mb = (peak - self._start) / 2**20


def _maxrss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def compile_dycl(model: torch.nn.Module, inputs: list[torch.Tensor], backend: str, target: str,
                 out_dir: Path, cold_cache: bool, tune_trials: int = 0,
                 tuning_dir: str | None = None, pipeline: str = "dycl-default") -> tuple[Any, dict[str, Any]]:
    """dycl.compile with `backend`, timed, its peak RSS increase measured; a fresh
    build cache unless `cold_cache` is off."""
    import dycl

    old = os.environ.get("DYCL_CACHE_DIR")
    if cold_cache:
        os.environ["DYCL_CACHE_DIR"] = str(out_dir.with_name(out_dir.name + ".cache"))
    try:
        with PeakRSS() as rss:
            start = time.perf_counter()
            if backend == "tvm-tuned":  # the tuning database persists even with a cold build cache
                cm = dycl.compile(model, inputs, target=target, backend="tvm", out_dir=out_dir,
                                  tune_trials=tune_trials, tuning_dir=tuning_dir, pipeline=pipeline)
            else:
                cm = dycl.compile(model, inputs, target=target, backend=backend, out_dir=out_dir,
                                  pipeline=pipeline)
            seconds = time.perf_counter() - start
    finally:
        if cold_cache:
            if old is None:
                os.environ.pop("DYCL_CACHE_DIR", None)
            else:
                os.environ["DYCL_CACHE_DIR"] = old
    info: dict[str, Any] = {"status": "ok", "seconds": seconds, "peak_rss_mb": round(rss.mb, 1)}
    report = getattr(cm, "report", None)
    if report is not None:
        info.update(
            frontend_and_passes_s=report.dycl_seconds,
            backend_s=report.total_backend_seconds,
            import_s=report.import_seconds,
            cache_hits=report.cache_hits,
            deduplicated=report.deduplicated,
            fallbacks=list(report.fallbacks),
        )
    info["subgraph_backends"] = dict(Counter(s["backend"] for s in cm.subgraphs.values()))
    info["whole_program"] = cm.manifest.get("whole_program")
    info["regions_as_python"] = sum(r["copies"] for r in cm.fallbacks)
    info["tensor_ops_compiled"] = compiled_share(cm)
    return cm, info


def compiled_share(cm: Any) -> float:
    """Share of the model's tensor calls that run in compiled sub-DNNs (1.0: none in Python)."""
    return round(1.0 - sum(r["tensor_op_share"] for r in cm.fallbacks), 3)


def tracing_inconsistency(model: torch.nn.Module, inputs: Sequence[Any], n: int, seed: int = 0) -> dict[str, Any]:
    """The direct-tracing baseline: `torch.jit.trace` on the example inputs records
    one path; the share of `n` random inputs (shaped like the example inputs, floats
    from a seeded torch.randn, other arguments as given) on which the trace's output
    differs from eager's or the trace raises. Inputs on which eager raises are left out."""
    gen = torch.Generator().manual_seed(seed)
    wrong = compared = 0
    # TracerWarning on every data-dependent branch: that is what is measured here.
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        try:
            traced = torch.jit.trace(model, tuple(inputs), strict=False, check_trace=False)
        except Exception as e:
            return {"status": "failed", "reason": one_line(e)}
        for _ in range(n):
            x = tuple(torch.randn(t.shape, dtype=t.dtype, generator=gen)
                      if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs)
            try:
                expected = model(*x)
            except Exception:
                continue
            compared += 1
            try:
                wrong += not same_output(expected, traced(*x))
            except Exception:
                wrong += 1
    if not compared:
        return {"status": "failed", "reason": "eager raised on every random input"}
    return {"status": "ok", "inputs": compared, "inconsistent": wrong, "inconsistent_share": wrong / compared}


def same_output(a: Any, b: Any) -> bool:
    """Same structure (a list and a tuple alike: a trace returns tuples), shapes, dtypes, and values close."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point() or a.is_complex():
            return torch.allclose(a, b, rtol=TRACE_RTOL, atol=TRACE_ATOL, equal_nan=True)
        return torch.equal(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(map(same_output, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_output(a[k], b[k]) for k in a)
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    return bool(a == b)


def implementations(args: argparse.Namespace) -> list[str]:
    """The dycl builds timed: one per backend, and one per backend without hoist-computation-free."""
    return [*args.backends, *([b + NO_HOIST for b in args.backends] if args.hoist_ablation else [])]


def bench_model(name: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    cuda = args.target == "cuda"
    device = "cuda" if cuda else "cpu"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    tolerance = CUDA_TOLERANCE if cuda else TOLERANCE

    model, inputs, paths = load_example(str(model_path(name)))
    model.eval()
    # dycl compiles from the CPU model (a CUDA build needs no GPU); eager runs on the target's device.
    eager = copy.deepcopy(model).to(device) if cuda else model
    xs = {p: tuple(x.to(device) for x in inp) for p, inp in paths.items()}
    result: dict[str, Any] = {
        "paths": list(paths),
        "compile": {},
        "latency_ms": {p: {} for p in paths},
        "error": {p: {} for p in paths},
        "speedup_vs_eager": {p: {} for p in paths},
        "speedup_vs_torch_compile": {p: {} for p in paths},
    }

    compiled: dict[str, Any] = {}
    impls = implementations(args)
    for impl in impls:
        backend = impl.removesuffix(NO_HOIST)
        pipeline = "dycl-no-hoist" if impl.endswith(NO_HOIST) else "dycl-default"
        try:
            src = copy.deepcopy(model) if cuda else model
            compiled[impl], result["compile"][impl] = compile_dycl(
                src, inputs, backend, args.target, work / name / impl.replace(" ", "-"), args.cold_cache,
                args.tune_trials, args.tuning_db, pipeline)
        except Exception as e:
            result["compile"][impl] = {"status": "failed", "reason": one_line(e)}
    if args.trace_inputs:
        result["tracing"] = tracing_inconsistency(model, inputs, args.trace_inputs)

    with torch.no_grad():
        reference = {p: eager(*x) for p, x in xs.items()}
        runners: dict[str, dict[str, Callable[[], Any]]] = {p: {"eager": (lambda x=x: eager(*x))} for p, x in xs.items()}

        tc: dict[str, Any] = {"status": "skipped"}
        if args.torch_compile:
            torch._dynamo.reset()
            compiled_eager = torch.compile(eager)
            tc = {"status": "ok", "first_call_s": {}}
            for p, x in xs.items():
                try:
                    start = time.perf_counter()
                    out = compiled_eager(*x)
                    sync()
                    tc["first_call_s"][p] = time.perf_counter() - start
                    result["error"][p]["torch.compile"] = error(reference[p], out)
                    runners[p]["torch.compile"] = lambda x=x: compiled_eager(*x)
                except Exception as e:  # an Inductor bug must not hide dycl's numbers
                    tc = {"status": "failed", "reason": one_line(e)}
                    for q in xs:
                        runners[q].pop("torch.compile", None)
                        result["latency_ms"][q]["torch.compile"] = None
                    break
        result["torch_compile"] = tc

        if args.oracle and not cuda:
            result["oracle"] = {}
            for p, x in xs.items():
                try:
                    (work / name / f"oracle-{p}").mkdir(parents=True, exist_ok=True)
                    oracle = PathOracle(model, x, work / name / f"oracle-{p}")
                    leaves, spec = torch.utils._pytree.tree_flatten(reference[p])
                    outs = iter(oracle.outputs())  # the tensors, in order: rebuild eager's structure
                    got = [next(outs) if isinstance(v, torch.Tensor) else v for v in leaves]
                    result["error"][p]["oracle"] = error(reference[p], torch.utils._pytree.tree_unflatten(got, spec))
                    runners[p]["oracle"] = oracle
                    result["oracle"][p] = {"status": "ok", "predicates": oracle.n_predicates}
                except Exception as e:
                    result["oracle"][p] = {"status": "failed", "reason": one_line(e)}

        for backend in impls:
            cm = compiled.get(backend)
            for p, x in xs.items():
                if cm is None:
                    result["latency_ms"][p][backend] = None
                    continue
                try:
                    out = cm(*x)
                    result["error"][p][backend] = error(reference[p], out)
                    if not cuda and not result["error"][p][backend] <= tolerance \
                            and rounding_only(model, paths[p], reference[p], to_cpu(out)):
                        result.setdefault("rounding", {}).setdefault(p, []).append(backend)
                    runners[p][backend] = lambda cm=cm, x=x: cm(*x)
                except Exception as e:
                    result["compile"][backend].setdefault("run_failures", {})[p] = one_line(e)
                    result["error"][p][backend] = math.inf
                    result["latency_ms"][p][backend] = None

        for p in xs:
            lat = result["latency_ms"][p]
            lat.update(interleaved_ms(runners[p], args.runs, args.warmup, sync))
            for backend in impls:
                if lat.get(backend) is None:
                    continue
                result["speedup_vs_eager"][p][backend] = lat["eager"] / lat[backend]
                t = lat.get("torch.compile")
                result["speedup_vs_torch_compile"][p][backend] = t / lat[backend] if t else None
                o = lat.get("oracle")
                result.setdefault("oracle_ratio", {}).setdefault(p, {})[backend] = o / lat[backend] if o else None
                without = lat.get(backend + NO_HOIST)
                if without:  # below 1: the pass makes this path faster
                    result.setdefault("hoist_ratio", {}).setdefault(p, {})[backend] = lat[backend] / without
    result["tolerance"] = tolerance
    result["mismatches"] = [
        f"{p}/{b}" for p in paths for b in impls
        if b in compiled and not result["error"][p].get(b, math.inf) <= tolerance
        and b not in result.get("rounding", {}).get(p, ())  # nearer the float64 answer: rounding
    ]
    return result


def bench_batches(name: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One model compiled once for every batch size (`dynamic=True`: the first
    dimension of each input is `b`) and torch.compile(dynamic=True), timed at each
    of `--batches` round-robin with eager; each path's inputs repeated to the batch.
    A path whose Python needs batch 1 (`if mask:` on a per-row mask) is reported as
    eager refusing that batch, and the compiled model must refuse it too."""
    model, inputs, paths = load_example(str(model_path(name)))
    model.eval()
    out: dict[str, Any] = {"compile": {}, "latency_ms": {}, "error": {}, "eager_refuses": []}
    compiled: dict[str, Any] = {}
    for backend in args.backends:
        try:
            start = time.perf_counter()
            compiled[backend] = dycl_compile(model, inputs, backend, work / name / f"{backend}-dynamic")
            out["compile"][backend] = {"status": "ok", "seconds": time.perf_counter() - start}
        except Exception as e:
            out["compile"][backend] = {"status": "failed", "reason": one_line(e)}
    torch._dynamo.reset()
    tc = torch.compile(model, dynamic=True) if args.torch_compile else None
    with torch.no_grad():
        for b in args.batches:
            for p, x in paths.items():
                key = f"{p}@b{b}"
                xs = tuple(t.repeat(b, *[1] * (t.dim() - 1)) if t.dim() else t for t in x)
                try:
                    reference = model(*xs)
                except Exception:
                    out["eager_refuses"].append(key)
                    for backend, cm in compiled.items():
                        try:
                            cm(*xs)
                            out["error"].setdefault(key, {})[backend] = math.inf  # eager raises, dycl returns
                        except Exception:
                            pass
                    continue
                runners: dict[str, Callable[[], Any]] = {"eager": lambda xs=xs: model(*xs)}
                if tc is not None:
                    runners["torch.compile"] = lambda xs=xs: tc(*xs)
                for backend, cm in compiled.items():
                    out["error"].setdefault(key, {})[backend] = error(reference, cm(*xs))
                    runners[backend] = lambda cm=cm, xs=xs: cm(*xs)
                out["latency_ms"][key] = interleaved_ms(runners, args.runs, args.warmup, lambda: None)
    tol = TOLERANCE
    out["mismatches"] = [f"{k}/{b}" for k, errs in out["error"].items() for b, e in errs.items() if not e <= tol]
    return out


def dycl_compile(model: torch.nn.Module, inputs: list[torch.Tensor], backend: str, out_dir: Path) -> Any:
    import dycl

    return dycl.compile(model, inputs, backend=backend, out_dir=out_dir, dynamic=True)


def print_batches(name: str, r: dict[str, Any], backends: Sequence[str]) -> None:
    print(f"\n{name} (compiled once, dynamic=True)")
    cols = ["eager", "torch.compile", *backends]
    rows = []
    for key, lat in r["latency_ms"].items():
        rows.append([key, *[_ms(lat.get(c)) for c in cols],
                     *[_x(lat["eager"] / lat[b]) if lat.get(b) else "-" for b in backends]])
    print(table(["path@batch", *[f"{c} ms" for c in cols], *[f"{b} vs eager" for b in backends]], rows,
                [False, *[True] * (len(cols) + len(backends))]))
    if r["eager_refuses"]:
        print(f"  eager refuses (and so does dycl): {', '.join(r['eager_refuses'])}")
    for b, c in r["compile"].items():
        if c["status"] != "ok":
            print(f"  {b}: compile failed: {c['reason']}")


# ------------------------------------------------------------------ printing

def table(header: Sequence[str], rows: list[Sequence[str]], right: Sequence[bool]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def fmt(row: Sequence[str]) -> str:
        return "  ".join(str(c).rjust(w) if r else str(c).ljust(w) for c, w, r in zip(row, widths, right)).rstrip()

    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


def _ms(v: float | None) -> str:
    return "failed" if v is None else f"{v:.3f}"


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _err(v: float | None) -> str:
    return "-" if v is None else f"{v:.1e}"


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def compile_rows(r: dict[str, Any], backends: Sequence[str]) -> list[list[str]]:
    rows = []
    tc = r["torch_compile"]
    if tc["status"] == "ok":
        rows.append(["torch.compile", "ok", f"{sum(tc['first_call_s'].values()):.1f}", "first call of each path", ""])
    else:
        rows.append(["torch.compile", tc["status"], "-", tc.get("reason", ""), ""])
    for b in backends:
        c = r["compile"][b]
        if c["status"] != "ok":
            rows.append([f"dycl {b}", "failed", "-", c["reason"], ""])
            continue
        subs = ", ".join(f"{k} x{v}" for k, v in sorted(c["subgraph_backends"].items()))
        notes = [f"peak RSS +{c['peak_rss_mb']:.0f} MB"]
        if c.get("cache_hits"):
            notes.append(f"{c['cache_hits']} cache hits")
        if c.get("import_s", 0) >= 0.1:
            notes.append(f"incl. {c['import_s']:.1f} s one-time imports")
        if c.get("fallbacks"):
            notes.append(f"{len(c['fallbacks'])} fallbacks")
        if (c.get("whole_program") or {}).get("used"):
            subs += " (run as one ONNX Runtime program)"
        rows.append([f"dycl {b}", "ok", f"{c['seconds']:.1f}", f"sub-DNNs: {subs}", "; ".join(notes)])
    return rows


LATENCY_HEADER = ["path", "impl", "ms", "max err", "eager/dycl", "torch.compile/dycl", "oracle/dycl"]


def latency_rows(r: dict[str, Any], backends: Sequence[str]) -> list[list[str]]:
    rows = []
    for p in r["paths"]:
        lat, err = r["latency_ms"][p], r["error"][p]
        rows.append([p, "eager", _ms(lat["eager"]), "-", "-", "-", "-"])
        if "torch.compile" in lat:
            rows.append([p, "torch.compile", _ms(lat["torch.compile"]), _err(err.get("torch.compile")), "-", "-", "-"])
        if "oracle" in lat:
            rows.append([p, "path oracle", _ms(lat["oracle"]), _err(err.get("oracle")), "-", "-", "-"])
        for b in backends:
            e = err.get(b)
            mark = "  MISMATCH" if e is not None and not e <= r["tolerance"] else ""
            if mark and b in r.get("rounding", {}).get(p, ()):
                mark = " (rounding: float64-checked)"
            rows.append([p, f"dycl {b}", _ms(lat[b]), _err(e) + mark,
                         _x(r["speedup_vs_eager"][p].get(b)), _x(r["speedup_vs_torch_compile"][p].get(b)),
                         _x(r.get("oracle_ratio", {}).get(p, {}).get(b))])
    return rows


def print_model(name: str, r: dict[str, Any], backends: Sequence[str]) -> None:
    print(f"\n== {name}: {len(r['paths'])} paths")
    print(table(["compile", "status", "seconds", "details", "notes"], compile_rows(r, backends),
                [False, False, True, False, False]))
    if r["torch_compile"]["status"] == "failed":
        print(f"torch.compile failed: {r['torch_compile']['reason']}")

    print()
    print(table(LATENCY_HEADER, latency_rows(r, backends), [False, False, True, True, True, True, True]))
    for p, o in r.get("oracle", {}).items():
        if o["status"] != "ok":
            print(f"path oracle failed on path {p}: {o['reason']}")
    for b in backends:
        for p, why in r["compile"][b].get("run_failures", {}).items():
            print(f"dycl {b} failed on path {p}: {why}")


SUMMARY_HEADER = ["model", "backend", "compile s", "compiled", "eager/dycl", "torch.compile/dycl", "oracle/dycl",
                  "max err"]


def summary_rows(results: dict[str, Any], backends: Sequence[str]) -> list[list[str]]:
    rows = []
    for name, r in results.items():
        for b in backends:
            c = r["compile"][b]
            errs = [r["error"][p].get(b, math.inf) for p in r["paths"]]
            rows.append([
                name, b, f"{c['seconds']:.1f}" if c["status"] == "ok" else "failed",
                f"{100 * c.get('tensor_ops_compiled', 1.0):.0f}%" if c["status"] == "ok" else "-",
                _x(geomean([r["speedup_vs_eager"][p].get(b) for p in r["paths"]])),
                _x(geomean([r["speedup_vs_torch_compile"][p].get(b) for p in r["paths"]])),
                _x(geomean([r.get("oracle_ratio", {}).get(p, {}).get(b) for p in r["paths"]])),
                _err(max(errs)) if c["status"] == "ok" else "-",
            ])
    return rows


def tracing_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, r in results.items():
        t = r.get("tracing")
        if t is None:
            continue
        if t["status"] == "ok":
            rows.append([name, f"{100 * t['inconsistent_share']:.0f}%", f"{t['inconsistent']}/{t['inputs']}", ""])
        else:
            rows.append([name, "-", "-", f"trace failed: {t['reason']}"])
    return rows


def hoist_rows(results: dict[str, Any], backends: Sequence[str]) -> list[list[str]]:
    rows = []
    for name, r in results.items():
        for p, ratios in r.get("hoist_ratio", {}).items():
            rows.extend([name, p, b, _ms(r["latency_ms"][p][b]), _ms(r["latency_ms"][p][b + NO_HOIST]), _x(ratios[b])]
                        for b in backends if b in ratios)
    return rows


TRACING_HEADER = ["model", "inconsistent", "differ/inputs", "notes"]
HOIST_HEADER = ["model", "path", "backend", "with ms", "without ms", "with/without"]


def print_summary(results: dict[str, Any], backends: Sequence[str]) -> None:
    print("\n== summary (geometric mean over paths)")
    print(table(SUMMARY_HEADER, summary_rows(results, backends), [False, False, True, True, True, True, True, True]))
    print("oracle/dycl: the path oracle's latency over dycl's (1.0x: as fast as the path's whole graph "
          "compiled by ONNX Runtime; the goal is >= 0.8x)")
    if rows := tracing_rows(results):
        print("\n== direct tracing: torch.jit.trace on the example inputs, share of random inputs "
              "on which it differs from eager")
        print(table(TRACING_HEADER, rows, [False, True, True, False]))
    if rows := hoist_rows(results, backends):
        print("\n== hoist-computation-free: latency with the pass over without it (below 1x: the pass helps)")
        print(table(HOIST_HEADER, rows, [False, False, False, True, True, True]))


# ---------------------------------------------------------------------- main

def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.splitlines()[0])
    p.add_argument("--models", type=_csv, default=None, help="comma-separated example names (default: all)")
    p.add_argument("--tune-trials", type=int, default=32, help="MetaSchedule trials per task for tvm-tuned")
    p.add_argument("--tuning-db", default=None, help="tuning database for tvm-tuned (default: the user cache's)")
    p.add_argument("--backends", type=_csv, default=list(DEFAULT_BACKENDS), help="comma-separated: " + ",".join(BACKENDS))
    p.add_argument("--runs", type=int, default=100, help="timed calls per measurement (median reported)")
    p.add_argument("--warmup", type=int, default=10, help="untimed calls before each measurement")
    p.add_argument("--target", default="llvm", choices=["llvm", "cuda"])
    p.add_argument("--json", metavar="OUT", help="write every number to this JSON file")
    p.add_argument("--batches", type=lambda v: [int(b) for b in _csv(v)], default=None,
                   help="e.g. 1,8: compile each model once with dynamic=True and time it at these batch sizes "
                        "(instead of the per-backend table)")
    p.add_argument("--no-torch-compile", dest="torch_compile", action="store_false", help="skip torch.compile")
    p.add_argument("--no-oracle", dest="oracle", action="store_false",
                   help="skip the path oracle (each path traced whole, run by ONNX Runtime with I/O binding)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads for PyTorch (eager, torch.compile, dycl's torch backend), TVM and "
                        "ONNX Runtime (default: each runtime's own default)")
    p.add_argument("--warm-cache", dest="cold_cache", action="store_false",
                   help="use dycl's build cache ($DYCL_CACHE_DIR or ~/.cache/dycl) instead of a fresh one "
                        "per compile (compile times then count cache hits)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test for CI: defaults to --models branchy --backends auto --runs 5 --warmup 1 "
                        "--no-torch-compile --trace-inputs 0 (options given explicitly still apply)")
    p.add_argument("--markdown", metavar="OUT", help="write the summary and per-path tables to this markdown file")
    p.add_argument("--chart", metavar="OUT", help="write a PNG bar chart of speedup over eager (needs matplotlib)")
    p.add_argument("--trace-inputs", type=int, default=100, metavar="N",
                   help="random inputs on which to compare torch.jit.trace of each model with eager (0: skip)")
    p.add_argument("--hoist-ablation", action="store_true",
                   help="also compile each model without the hoist-computation-free pass (pipeline "
                        "dycl-no-hoist) and report the latency ratio per path")
    return p


QUICK = {"models": ["branchy"], "backends": ["auto"], "runs": 5, "warmup": 1, "torch_compile": False,
         "trace_inputs": 0}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.quick:  # parsed again so that options given explicitly override --quick's defaults
        parser.set_defaults(**QUICK)
        args = parser.parse_args(argv)
    unknown = [b for b in args.backends if b not in BACKENDS]
    if unknown:
        raise SystemExit(f"bench: unknown backend(s) {', '.join(unknown)} (choose from {', '.join(BACKENDS)})")
    if args.runs < 1 or args.warmup < 0:
        raise SystemExit("bench: --runs must be >= 1 and --warmup >= 0")
    if args.trace_inputs < 0:
        raise SystemExit("bench: --trace-inputs must be >= 0")
    if args.batches and (args.markdown or args.chart or args.hoist_ablation):
        raise SystemExit("bench: --markdown, --chart and --hoist-ablation do not apply to --batches")
    if args.chart:
        try:  # checked before the run, not after minutes of it
            import matplotlib  # noqa: F401
        except ImportError:
            raise SystemExit("bench: --chart needs matplotlib (pip install matplotlib, or pip install -e '.[test]')") \
                from None
    if args.target == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("bench: --target cuda needs a CUDA GPU")
        # dycl's kernels compute in FP32; so must the eager reference.
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    if args.threads is not None:
        if args.threads < 1:
            raise SystemExit("bench: --threads must be >= 1")
        torch.set_num_threads(args.threads)
        # Read when TVM's runtime creates its thread pool (on the first compiled call, after this).
        os.environ["TVM_NUM_THREADS"] = str(args.threads)
        os.environ["DYCL_ORT_NUM_THREADS"] = str(args.threads)  # read when a session loads
    names = args.models or available_models()
    for n in names:
        model_path(n)

    machine = machine_info(args.target)
    print(f"machine: {machine['platform']}, {machine['cpus']} CPUs, torch {machine['torch']} "
          f"({machine['torch_threads']} threads)"
          + (f", {machine['gpu']}" if "gpu" in machine else ""))
    batches = f"batch sizes {', '.join(map(str, args.batches))}" if args.batches else "batch as in each example's inputs"
    print(f"target {args.target}; median of {args.runs} calls after {args.warmup} warmup calls; {batches}")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="dycl-bench-") as work:
        for name in names:
            if args.batches:
                results[name] = bench_batches(name, args, Path(work))
                print_batches(name, results[name], args.backends)
            else:
                results[name] = bench_model(name, args, Path(work))
                print_model(name, results[name], implementations(args))
    if not args.batches:
        print_summary(results, args.backends)

    mismatches = [f"{n}/{m}" for n, r in results.items() for m in r["mismatches"]]
    failures = [f"{n}/{b}" for n, r in results.items() for b in implementations(args)
                if r["compile"][b]["status"] != "ok"]
    settings = {k: getattr(args, k) for k in ("backends", "runs", "warmup", "target", "threads", "torch_compile",
                                            "cold_cache", "batches", "trace_inputs", "hoist_ablation")}
    doc = {"machine": machine, "settings": settings, "models": results,
           "mismatches": mismatches, "compile_failures": failures}
    if args.json:
        Path(args.json).write_text(json.dumps(finite(doc), indent=2, default=str) + "\n")
        print(f"\nwrote {args.json}")
    if args.markdown or args.chart:
        from dycl.tools import bench_report

        if args.markdown:
            bench_report.write_markdown(Path(args.markdown), doc)
            print(f"wrote {args.markdown}")
        if args.chart:
            bench_report.write_chart(Path(args.chart), doc)
            print(f"wrote {args.chart}")
    if mismatches:
        print(f"MISMATCH against eager: {', '.join(mismatches)}")
    if failures:
        print(f"dycl compile failed: {', '.join(failures)}")
    return 1 if mismatches or failures else 0


if __name__ == "__main__":
    sys.exit(main())
