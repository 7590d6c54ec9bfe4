"""The `auto` backend policy: per sub-DNN, the fastest backend that is really faster.

Candidates (eager torch always among them, so a sub-DNN is never slower than
eager within noise) are built through the build cache, then timed on the
sub-DNN's real shapes in interleaved rounds (each round times every candidate,
in rotating order, so load on a shared machine hits them alike). A candidate
replaces a cheaper-to-build one only when it is faster by a margin in most
rounds; otherwise the cheaper one stays. Decisions are cached by the sub-DNN's
structural hash, target and versions, so a recompile measures nothing.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import fx

from dycl.backends.base import auto_candidates
from dycl.build_cache import cache_dir

# Cheapest to build (and least to go wrong) first: a tie goes to the earlier one.
PREFERENCE = ("torch", "onnxruntime", "tvm")
MARGIN = 0.95  # a candidate must take at most this share of the other's time in the median round ...
MAJORITY = 0.75  # ... and less time in at least this share of the rounds
ROUNDS = 15
ROUND_SECONDS = 0.002  # per candidate per round: enough calls to rise above timer noise
# torch's OpenMP workers (libgomp, also inductor's) spin ~10 ms after a parallel op,
# taking a core from whatever runs next: ONNX Runtime measured right after eager torch
# ran 3-4x slower than alone, and auto kept torch. Let them stop before the next candidate.
SPINNING = ("torch", "inductor")
SETTLE_SECONDS = 0.015
POLICY_VERSION = "auto-5"  # bumped when measuring changes: old decisions are not reused


@dataclass
class Choice:
    backend: str
    reason: str
    timings_us: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {"backend": self.backend, "reason": self.reason, "timings_us": self.timings_us}


def candidates_for(graph: fx.GraphModule, target_kind: str) -> tuple[list[str], str]:
    """The backends worth building for this sub-DNN, and why others are skipped.
    On the CPU every one is measured: with dycl's default schedules
    (tvm_cpu_schedule) TVM's convolutions are no longer ruled out in advance."""
    if target_kind != "llvm":
        return ["tvm"], "only TVM builds for CUDA here"
    # Plugin backends that ask for it are measured too (after the built-ins: a tie keeps a built-in).
    extra = auto_candidates()
    return ["torch", "onnxruntime", "tvm", *extra], ""


def interleaved_timings(runs: dict[str, Callable[[], Any]], rounds: int = ROUNDS) -> dict[str, list[float]]:
    """Seconds per call of each candidate, one figure per round."""
    calls: dict[str, int] = {}
    for name, run in runs.items():
        for _ in range(3):
            run()  # warm up (first-call allocation, lazy init)
        start = time.perf_counter()
        run()
        once = max(time.perf_counter() - start, 1e-7)
        calls[name] = max(1, min(1000, int(ROUND_SECONDS / once)))
        _settle(name)
    samples: dict[str, list[float]] = {n: [] for n in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            run, k = runs[name], calls[name]
            start = time.perf_counter()
            for _ in range(k):
                run()
            samples[name].append((time.perf_counter() - start) / k)
            _settle(name)
    return samples


def _settle(name: str) -> None:
    if name in SPINNING:
        time.sleep(SETTLE_SECONDS)


def decide(samples: dict[str, list[float]]) -> Choice:
    """The cheapest candidate that no other beats clearly (by MARGIN in MAJORITY of rounds)."""
    med = {n: statistics.median(s) for n, s in samples.items()}
    order = sorted(samples, key=lambda n: PREFERENCE.index(n) if n in PREFERENCE else len(PREFERENCE))
    chosen = order[0]
    why = "the cheapest to build"
    for other in order[1:]:
        faster, wins = clearly_faster(samples[other], samples[chosen])
        if faster:
            why = (f"{med[chosen] / med[other]:.2f}x faster than {chosen}, "
                   f"in {wins} of {len(samples[other])} rounds")
            chosen = other
    timings = {n: round(m * 1e6, 2) for n, m in med.items()}
    return Choice(chosen, f"{chosen}: {why}", timings)


def clearly_faster(new: list[float], old: list[float]) -> tuple[bool, int]:
    """Whether `new` beats `old`, paired by round (the same load on both): faster in
    most rounds, and by the margin in the median round; and in how many rounds."""
    ratios = sorted(a / b for a, b in zip(new, old))
    wins = sum(r < 1.0 for r in ratios)
    return statistics.median(ratios) < MARGIN and wins >= MAJORITY * len(ratios), wins


def cached_choice(key: str) -> Choice | None:
    path = _choice_file(key)
    if path is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        return Choice(data["backend"], data["reason"] + " (measured earlier)", data["timings_us"])
    except (ValueError, KeyError, TypeError):
        return None  # a torn or foreign entry: measure again


def store_choice(key: str, choice: Choice) -> None:
    path = _choice_file(key)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{time.time_ns()}.tmp")
    tmp.write_text(json.dumps(choice.to_json()))
    tmp.replace(path)  # atomic: a concurrent compile sees the old entry or this one


def _choice_file(key: str) -> Path | None:
    root = cache_dir()
    return None if root is None else root / "choices" / f"{key}.json"
