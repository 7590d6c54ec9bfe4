"""Scaling benchmark: time per op of parse, print, verify and each pass of the
default pipeline, on generated dycl IR of growing size.

    python -m tools.bench_scaling [--max-ops N] [--sizes 1000,10000] [--stages parse,verify]

A linear stage has a flat time per op. The last column is the per-op time at
the largest size divided by that at 10k ops (or the smallest size): ≈ 1 when linear.
"""

from __future__ import annotations

import argparse
import gc
import io
import sys
import time
from collections.abc import Callable

from torch import nn
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer

from dycl.models import register_live
from dycl.parsing import LocatingParser
from dycl.passes.pipelines import PIPELINES
from dycl.registry import PASSES

_ANY = "!dycl.any"
_T = "tensor<1x16xf32>"


class _Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 16)


def _segment(i: int, prev: str, prev_t: str) -> list[str]:
    """~30 ops (after the pipeline's inlining and unrolling): tensor calls, a helper
    call, a data-dependent nested dycl.if, a constant-trip dycl.for and a branch
    on a constant that constant-propagation folds."""
    a = _ANY
    return [
        f'%a{i} = dycl.call_module "fc"(%{prev}) : ({prev_t}) -> {a}',
        f'%b{i} = dycl.call_function "torch.relu"(%a{i}) : ({a}) -> {a}',
        f"%y{i} = func.call @helper(%b{i}) : ({a}) -> {a}",
        f'%m{i} = dycl.call_method "mean"(%y{i}) : ({a}) -> {a}',
        f"%z{i} = arith.constant 0 : i64",
        f'%g{i} = dycl.call_function "_operator.gt"(%m{i}, %z{i}) : ({a}, i64) -> {a}',
        f"%c{i} = dycl.to_bool %g{i} : {a}",
        f"%r{i} = dycl.if %c{i} -> ({a}) {{",
        f'  %t{i} = dycl.call_function "torch.tanh"(%y{i}) : ({a}) -> {a}',
        f"  %u{i} = dycl.if %c{i} -> ({a}) {{",
        f'    %v{i} = dycl.call_method "neg"(%t{i}) : ({a}) -> {a}',
        f"    dycl.yield %v{i} : {a}",
        "  } else {",
        f"    dycl.yield %t{i} : {a}",
        "  }",
        f"  dycl.yield %u{i} : {a}",
        "} else {",
        f'  %e{i} = dycl.call_function "torch.sigmoid"(%y{i}) : ({a}) -> {a}',
        f"  dycl.yield %e{i} : {a}",
        "}",
        f"%k0_{i} = arith.constant 0 : i64",
        f"%k2_{i} = arith.constant 2 : i64",
        f"%k1_{i} = arith.constant 1 : i64",
        f"%l{i} = dycl.for %j{i} = %k0_{i} to %k2_{i} step %k1_{i} iter_args(%h{i} = %r{i}) -> ({a}) {{",
        f'  %n{i} = dycl.call_function "torch.relu"(%h{i}) : ({a}) -> {a}',
        f"  dycl.yield %n{i} : {a}",
        "}",
        f"%f{i} = arith.constant false",
        f"%o{i} = dycl.if %f{i} -> ({a}) {{",
        f'  %q{i} = dycl.call_method "contiguous"(%l{i}) : ({a}) -> {a}',
        f"  dycl.yield %q{i} : {a}",
        "} else {",
        f"  dycl.yield %l{i} : {a}",
        "}",
    ]


_OPS_PER_SEGMENT = 26  # counted by count_ops on the parsed segment


def generate(n_ops: int, model_key: str = "none") -> str:
    """A module of about `n_ops` ops: one big @forward plus a helper."""
    segments = max(1, (n_ops - 8) // _OPS_PER_SEGMENT)
    lines = [
        f'builtin.module attributes {{dycl.model = "{model_key}"}} {{',
        f"func.func private @helper(%p: {_ANY}) -> {_ANY} {{",
        f'  %q = dycl.call_function "torch.neg"(%p) : ({_ANY}) -> {_ANY}',
        f"  func.return %q : {_ANY}",
        "}",
        f"func.func @forward(%x: {_T}) -> {_ANY} {{",
    ]
    prev, prev_t = "x", _T
    for i in range(segments):
        lines += ["  " + s for s in _segment(i, prev, prev_t)]
        prev, prev_t = f"o{i}", _ANY
    lines += [f"  dycl.return %{prev} : {_ANY}", "}", "}"]
    return "\n".join(lines) + "\n"


def generate_host(n_subgraphs: int) -> str:
    """A host function calling `n_subgraphs` sub-DNNs: symbol lookups of dycl.call_subgraph."""
    lines = []
    for i in range(n_subgraphs):
        lines += [f"func.func @sub_{i}(%a: {_T}) -> {_T} attributes {{dycl.subgraph}} {{",
                  f'  %b = dycl.call_function "torch.relu"(%a) : ({_T}) -> {_T}',
                  f"  func.return %b : {_T}", "}"]
    lines.append(f"func.func @host(%x0: {_T}) -> {_T} {{")
    for i in range(n_subgraphs):
        lines.append(f"  %x{i + 1} = dycl.call_subgraph @sub_{i}(%x{i}) : ({_T}) -> {_T}")
    lines += [f"  dycl.return %x{n_subgraphs} : {_T}", "}"]
    return "\n".join(lines) + "\n"


def generate_deep(depth: int) -> str:
    """`depth` dycl.ifs nested in one another (plus the function's region)."""
    lines = [f"func.func @deep(%c: i1, %x: {_T}) -> {_T} {{"]
    for i in range(depth):
        lines.append(f"%r{i} = dycl.if %c -> ({_T}) {{")
    lines += [f'%y = dycl.call_function "torch.relu"(%x) : ({_T}) -> {_T}', f"dycl.yield %y : {_T}"]
    for i in reversed(range(depth)):
        lines += ["} else {", f"dycl.yield %x : {_T}", "}"]
        lines.append(f"dycl.yield %r{i} : {_T}" if i else f"dycl.return %r0 : {_T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def count_ops(op: Operation) -> int:
    return sum(1 for _ in op.walk())


def make_context() -> Context:
    from dycl.compiler import context

    return context()


def parse(ctx: Context, text: str) -> ModuleOp:
    return LocatingParser(ctx, text, "bench.mlir").parse_module()


def print_ir(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


def run_size(n_ops: int, stages: set[str] | None, log: Callable[[str], None]) -> dict[str, tuple[int, float]]:
    """{stage: (ops at its input, seconds)} for one generated module."""
    ctx = make_context()
    key = register_live(_Model())
    text = generate(n_ops, key)
    res: dict[str, tuple[int, float]] = {}

    def want(s: str) -> bool:
        return stages is None or s.split("#")[0] in stages

    t, module = _timed(lambda: parse(ctx, text))
    assert isinstance(module, ModuleOp)
    n = count_ops(module)
    res["parse"] = (n, t)
    if want("print"):
        res["print"] = (n, _timed(lambda: print_ir(module))[0])
    if want("verify"):
        res["verify"] = (n, _timed(module.verify)[0])
    seen: dict[str, int] = {}
    for name in PIPELINES["dycl-default"]:
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}#{seen[name]}"
        n = count_ops(module)
        p = PASSES[name]()()
        res[label] = (n, _timed(lambda: p.apply(ctx, module))[0])
        log(f"  {n_ops:>7}: {label:<26} {res[label][1]:8.3f}s ({n} ops)")
    n = count_ops(module)
    if want("verify"):
        res["verify-out"] = (n, _timed(module.verify)[0])
    if want("print"):
        res["print-out"] = (n, _timed(lambda: print_ir(module))[0])
    if stages is not None:
        res = {k: v for k, v in res.items() if want(k)}
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bench_scaling", description=__doc__.splitlines()[0])
    ap.add_argument("--max-ops", type=int, default=100_000)
    ap.add_argument("--sizes", help="comma-separated op counts (default 1k,10k,50k,100k up to --max-ops)")
    ap.add_argument("--stages", help="comma-separated: parse,print,verify and pass names (default all)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else [s for s in (1_000, 10_000, 50_000, 100_000) if s <= args.max_ops])
    stages = set(args.stages.split(",")) | {"parse"} if args.stages else None
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if args.verbose else (lambda s: None)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    run_size(500, stages, lambda s: None)  # warm-up: imports, torch, caches
    results = {}
    for n in sizes:
        log(f"size {n}")
        results[n] = run_size(n, stages, log)

    base = 10_000 if 10_000 in results else sizes[0]
    top = sizes[-1]
    labels = list(results[sizes[0]])
    head = f"{'stage':<26}" + "".join(f"{f'{n // 1000}k us/op':>12}" for n in sizes) + f"{f'{top // 1000}k/{base // 1000}k':>10}"
    print(head)
    for label in labels:
        per = [results[n][label][1] / results[n][label][0] * 1e6 for n in sizes]
        ratio = per[-1] / per[sizes.index(base)] if per[sizes.index(base)] else float("nan")
        print(f"{label:<26}" + "".join(f"{p:12.2f}" for p in per) + f"{ratio:10.2f}")
    print("ops at each stage's input: " + ", ".join(
        f"{n // 1000}k→{results[n][labels[-1]][0]}" for n in sizes) + " (last stage)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
