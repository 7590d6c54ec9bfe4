"""The `dycl` command: import, compile, run, hcfg, demo."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dycl.diagnostics import DyclError, report_and_exit
from dycl.diagnostics import OutputError, UsageError

_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
           "i64": "int64", "i32": "int32", "i8": "int8", "ui8": "uint8", "i1": "bool"}


def input_signature(specs: list[str], dims: list[str] | None) -> Any:
    """The --input options (one per input, or several in one, comma-separated) and
    --dim ranges as one signature (dycl/signature.py)."""
    from dycl.signature import Signature

    for spec in specs:  # errors name the option they are in
        Signature.parse(spec, what=f"--input '{spec}'")
    return Signature.parse(", ".join(specs), dims or [])


def example_shapes(sig: Any) -> list[tuple[list[int], str]]:
    """Example shapes for a signature: each symbolic dimension at its lowest size
    (at least 2, within its range: sizes 0 and 1 are special cases to torch)."""
    sizes = {}
    for name in sig.names():
        lo, hi = sig.range_of(name)
        sizes[name] = max(lo, 2) if hi is None else min(max(lo, 2), hi)
    return [([d if isinstance(d, int) else sizes[d] for d in i.dims], i.dtype) for i in sig.inputs]


def make_inputs(specs: list[str], seed: int = 0, dims: list[str] | None = None) -> list[Any]:
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = []
    sig = input_signature(specs, dims)
    if sig.dynamic:
        chosen = {}
        for (shape, _), spec in zip(example_shapes(sig), sig.inputs):
            chosen.update({d: n for d, n in zip(spec.dims, shape) if isinstance(d, str) and not d.startswith("?")})
        print("dycl: note: example inputs use " + ", ".join(f"{k}={v}" for k, v in sorted(chosen.items()))
              + " (each named dimension at the lowest size of its --dim range, at least 2; "
              "raise it with --dim NAME=LOW..HIGH if the model needs more)", file=sys.stderr)
    for shape, dtype in example_shapes(sig):
        dt = getattr(torch, dtype)
        if dt.is_floating_point:
            out.append(torch.randn(shape, generator=gen).to(dt))
        else:
            out.append(torch.randint(0, 2, shape, generator=gen).to(dt))
    return out


def _model_and_inputs(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    from dycl.models import load_spec, model_from_spec

    model = model_from_spec(args.model)
    if args.input:
        inputs = make_inputs(args.input, dims=getattr(args, "dim", None))
    else:
        where = args.model.rsplit(":", 1)[0]
        try:
            inputs = list(load_spec(f"{where}:example_inputs")())
        except DyclError:
            raise DyclError("give the input shapes with --input (e.g. --input 1x3x32x32xf32)") from None
    return model, inputs


def cmd_import(args: argparse.Namespace) -> None:
    from dycl.compiler import run_pipeline
    from dycl.frontend.lowering import lower_module
    from dycl.printing import module_text

    passes = _passes_until(args.pipeline, args.stop_after)  # a bad name fails before the model loads
    model, inputs = _model_and_inputs(args)
    if args.fallback == "error":
        module = lower_module(model, inputs, args.model)
    else:
        try:
            module = lower_module(model, inputs, args.model, fallback="statement")
        except DyclError:
            module = lower_module(model, inputs, args.model, fallback="whole")
    run_pipeline(module, passes)
    text = module_text(module, debuginfo=args.locations)
    _write(text, args.output)


def _passes_until(pipeline: str, stop_after: str) -> list[Any]:
    """The passes of `pipeline` up to and including stage `stop_after` (dycl/ir_dump.py)."""
    from dycl.ir_dump import FRONTEND, check_stages, stage_names
    from dycl.passes.pipelines import PIPELINES, pipeline_passes

    passes = pipeline_passes(pipeline)
    check_stages([stop_after], pipeline, PIPELINES[pipeline], "to stop after", allow_all=False)
    return passes[: [FRONTEND, *stage_names(PIPELINES[pipeline])].index(stop_after)]


def cmd_compile(args: argparse.Namespace) -> None:
    import warnings

    import dycl
    from dycl.hcfg import Hcfg
    from dycl.ir_dump import banner

    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    model, inputs = _model_and_inputs(args)

    def print_ir(stage: str, text: str) -> None:  # as each is taken: a later failure still shows them
        print(f"{banner(stage)}\n{text}", file=sys.stderr, flush=True)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", dycl.FallbackWarning)
        sig = input_signature(args.input, args.dim) if args.input else None
        shapes = dict(signature=sig.text(), dynamic=True) if sig is not None and sig.dynamic else {}
        if args.dim and not shapes:
            raise UsageError("--dim gives a range to a named dimension of --input (e.g. --input 'b x 8 x f32' "
                             "--dim b=1..64); no --input names one")
        cm = dycl.compile(model, inputs, args.target, args.backend, arch=args.arch, out_dir=args.output,
                          pipeline=args.pipeline, jobs=args.jobs, tune_trials=args.tune_trials,
                          tuning_dir=args.tuning_db, fallback=args.fallback, dump_ir=args.print_ir_after or [],
                          on_ir=print_ir, model_key=args.model, host=args.host, **shapes)
    for w in caught:
        print(f"dycl: note: {str(w.message).removeprefix('dycl: ')}", file=sys.stderr)
    report = cm.report
    print(Hcfg.from_module(cm.module).summary())
    cpp = ", host.cpp, dycl_model, libdycl_model.so" if args.host == "cpp" else ""
    print(f"wrote {args.output}/ (host.py{cpp}, manifest.json, module.mlir, hcfg.dot, {len(cm.subgraphs)} sub-DNNs)")
    if args.explain:
        print_explain(cm)
    if args.time_passes:
        print_timing(report)


def print_explain(cm: Any) -> None:
    """What was compiled where, and what runs as Python and why (like torch._dynamo.explain)."""
    subs = cm.subgraphs
    print(f"sub-DNNs: {len(subs)}")
    for name, info in subs.items():
        print(f"  {name}: {info['backend']}" + (f" -- {info['why']}" if info.get("why") else ""))
    whole = cm.manifest.get("whole_program")
    if whole:
        runs = f"one ONNX Runtime session ({whole['file']})" if whole["used"] else "the sub-DNNs above"
        print(f"program: {runs} -- {whole['why']}")
    state = cm.manifest.get("module_state")
    if state:
        print(f"module state read on the host each call (forward changes it): {', '.join(state)}")
    regions = cm.fallbacks
    print(f"fallback regions (run as Python): {len(regions)}")
    for r in regions:
        copies = f", {r['copies']} copies" if r.get("copies", 1) > 1 else ""
        print(f"  {r['loc']}: {r['construct']} -- {r['reason']} ({100 * r['tensor_op_share']:.0f}% of tensor calls{copies})")
    for attempt in getattr(cm.report, "fallback_attempts", []):
        print(f"  widened after: {attempt}")


def print_timing(report: Any) -> None:
    print(f"  (torch tracing import {report.import_seconds * 1e3:9.1f} ms, shared with the backends)")
    print(f"  frontend              {report.frontend_seconds * 1e3:9.1f} ms")
    for name, s in report.pass_seconds.items():
        print(f"  {name:<22}{s * 1e3:9.1f} ms")
    backend = report.total_backend_seconds
    print(f"  backend (all sub-DNNs){backend * 1e3:9.1f} ms  ({report.cache_hits} from the build cache, "
          f"{report.deduplicated} identical to another sub-DNN)")
    if backend:
        print(f"  dycl's own share: {100 * report.dycl_seconds / backend:.2f}% of backend compile time")


def cmd_run(args: argparse.Namespace) -> None:
    import torch

    if args.host == "cpp":
        return run_cpp_host(args)
    from dycl.runtime import load

    cm = load(args.artifact)
    inputs = _run_inputs(args, cm.manifest)
    try:
        out = cm(*inputs)
    except DyclError:
        raise
    except Exception as e:  # the model's own exception (an assert, a raise), as eager raises it
        raise DyclError(f"the model raised {type(e).__name__}" + (f": {e}" if str(e) else "")) from None
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    if args.output:
        _write_npy_outputs(leaves, Path(args.output))
    for i, t in enumerate(leaves):
        if isinstance(t, torch.Tensor):
            print(f"output {i}: shape {list(t.shape)} {str(t.dtype).removeprefix('torch.')} sum={t.float().sum().item():.6f}")
        else:
            print(f"output {i}: {t!r}")


def _run_inputs(args: argparse.Namespace, manifest: dict[str, Any]) -> list[Any]:
    specs = args.input or [f"{'x'.join(map(str, e['shape']))}x{_short(e['dtype'])}" for e in manifest["inputs"]]
    return [_npy_input(s) if s.endswith(".npy") else make_inputs([s], args.seed + i)[0] for i, s in enumerate(specs)]


def run_cpp_host(args: argparse.Namespace) -> None:
    """`dycl run --host cpp`: the artifact's `dycl_model` command on .npy inputs
    (random ones written to a temporary directory first)."""
    import subprocess
    import tempfile

    import numpy as np

    from dycl.runtime.artifact import check

    path = Path(args.artifact)
    manifest = check(path)  # every file as dycl wrote it, the executable included
    cpp = manifest.get("cpp_host")
    if not isinstance(cpp, dict) or not isinstance(cpp.get("executable"), str):
        raise UsageError(f"'{path}' has no C++ host", note="compile it with --host cpp")
    with tempfile.TemporaryDirectory(prefix="dycl-run-") as tmp:
        files = []
        for i, x in enumerate(_run_inputs(args, manifest)):
            if args.input and args.input[i].endswith(".npy"):
                files.append(args.input[i])
                continue
            files.append(str(Path(tmp) / f"input_{i}.npy"))
            np.save(files[-1], x.numpy(), allow_pickle=False)
        out_dir = args.output or str(Path(tmp) / "out")
        done = subprocess.run([str(path.resolve() / cpp["executable"]), str(path), "-o", out_dir, *files],
                              capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    if done.returncode:
        message = done.stderr.strip().removeprefix("dycl_model: ").removeprefix("error: ")
        raise DyclError(f"the C++ host failed: {message}")


def _npy_input(path: str) -> Any:
    import numpy as np
    import torch

    try:
        return torch.from_numpy(np.load(path, allow_pickle=False))
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read input '{path}': {e}") from None


def _write_npy_outputs(leaves: list[Any], out_dir: Path) -> None:
    """`output_<i>.npy` per flattened output, in order; Python numbers as 0-d arrays."""
    import numpy as np
    import torch

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for i, t in enumerate(leaves):
            value = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
            np.save(out_dir / f"output_{i}.npy", value, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise OutputError(f"cannot write outputs to '{out_dir}': {e}") from None


def _short(dtype: str) -> str:
    return {v: k for k, v in _DTYPES.items()}[dtype]


def cmd_hcfg(args: argparse.Namespace) -> None:
    from xdsl.parser import Parser

    from dycl.compiler import context
    from dycl.hcfg import Hcfg

    from dycl.render import picture_format, render

    fmt = picture_format(args.output)  # an unknown suffix fails before any work
    src = Path(args.source)
    # An artifact is read through its module.mlir (and manifest.json for each sub-DNN's
    # backend): drawing it runs none of its code.
    ir = src / "module.mlir" if src.is_dir() else src
    if src.is_dir() and not ir.is_file():
        raise UsageError(f"'{src}' is not a dycl artifact (no module.mlir)")
    graph = Hcfg.from_module(Parser(context(), ir.read_text(), str(ir)).parse_module(),
                             subgraphs=_built_subgraphs(src) if src.is_dir() else None)
    print(graph.summary(), file=sys.stderr)
    if fmt is None:
        _write(graph.to_dot(), args.output)
    else:
        render(graph.to_dot(), Path(args.output), fmt)
        print(f"wrote {args.output}", file=sys.stderr)


def _built_subgraphs(artifact: Path) -> dict[str, Any] | None:
    """The manifest's sub-DNN records; None where it is missing or unreadable (the IR still draws)."""
    import json

    try:
        subgraphs = json.loads((artifact / "manifest.json").read_text()).get("subgraphs")
    except (OSError, ValueError, AttributeError):
        return None
    return subgraphs if isinstance(subgraphs, dict) else None


def cmd_demo(args: argparse.Namespace) -> None:
    from dycl.demo import run_demo

    run_demo(args.model, target=args.target, backend=args.backend, runs=args.runs)


def _write(text: str, output: str | None) -> None:
    if output and output != "-":
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dycl", description="Compile dynamic PyTorch models.")
    sub = p.add_subparsers(dest="command", required=True)

    def model_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("model", help="path/to/file.py:make_model (a factory returning an nn.Module)")
        sp.add_argument("--input", action="append",
                        help="input shape and dtype, e.g. 1x3x32x32xf32, or with named dimensions "
                             "'b x 3 x h x w x f32, b x i64' (repeat per input, or comma-separate)")
        sp.add_argument("--dim", action="append", metavar="NAME=LOW..HIGH",
                        help="the range of a named --input dimension, e.g. b=1..64 or h=w=32..512 (repeatable)")

    sp = sub.add_parser("import", help="lower a model's forward to dycl IR")
    model_args(sp)
    sp.add_argument("-o", "--output", help="output .mlir file (default: stdout)")
    sp.add_argument("--locations", action="store_true", help="print Python source locations")
    sp.add_argument("--pipeline", default="dycl-default", help="the pipeline --stop-after stops in")
    sp.add_argument("--stop-after", metavar="PASS", default="frontend",
                    help="run the pipeline's passes up to PASS (NAME#2 for a pass's second run); "
                         "default: frontend, the IR before any pass")
    sp.add_argument("--fallback", default="python", choices=["python", "error"],
                    help="untranslatable code becomes a dycl.py_region (default) or a located error")
    sp.set_defaults(func=cmd_import)

    sp = sub.add_parser("compile", help="compile a model to an artifact directory")
    model_args(sp)
    sp.add_argument("--target", default="llvm", choices=["llvm", "cuda"])
    sp.add_argument("--arch", help="CUDA arch, e.g. sm_90")
    sp.add_argument("--backend", default="auto",
                    help="auto (default: per sub-DNN, the fastest of torch, onnxruntime and tvm that is clearly "
                         "faster, measured), tvm, onnxruntime, torch, inductor, fastest, or an installed "
                         "plugin's backend (docs/plugins.md)")
    sp.add_argument("--pipeline", default="dycl-default")
    sp.add_argument("--print-ir-after", "--dump-ir-after", metavar="PASS", action="append",
                    help="print the IR after PASS to stderr (repeatable; NAME#2 for a pass's second run, "
                         "'frontend' before any pass, 'all' for every stage)")
    sp.add_argument("--time-passes", action="store_true", help="report time per pass and backend")
    sp.add_argument("-j", "--jobs", type=int, default=1, help="sub-DNNs built at once (worker processes)")
    sp.add_argument("--tune-trials", type=int, default=0, metavar="N",
                    help="tune TVM kernels with MetaSchedule, N trials per task (llvm only)")
    sp.add_argument("--tuning-db", metavar="DIR", help="persistent tuning database (default: the build cache)")
    sp.add_argument("-o", "--output", required=True, help="artifact directory")
    sp.add_argument("--fallback", default="python", choices=["python", "error"],
                    help="what the frontend cannot translate: run it as Python in the host (default) or stop "
                         "with a located error")
    sp.add_argument("--explain", action="store_true",
                    help="list each sub-DNN's backend and each part run as Python, with why")
    sp.add_argument("--host", default="python", choices=["python", "cpp"],
                    help="cpp: also build the C++ host (host.cpp, the dycl_model command, libdycl_model.so with "
                         "a C API); needs TVM or Inductor sub-DNNs and no Python in the host")
    sp.set_defaults(func=cmd_compile)

    sp = sub.add_parser("run", help="run a compiled artifact on .npy or random inputs")
    sp.add_argument("artifact")
    sp.add_argument("--input", action="extend", nargs="+",
                    help=".npy files, or shapes like 1x16xf32 for random values, one per model input "
                         "(default: the compiled shapes)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("-o", "--output", help="write output_0.npy, output_1.npy, ... (flattened outputs) here")
    sp.add_argument("--host", default="python", choices=["python", "cpp"],
                    help="run the Python host in this process (default) or the artifact's C++ host "
                         "(compiled with --host cpp)")
    sp.set_defaults(func=cmd_run)

    sp = sub.add_parser("hcfg", help="draw the HCFG of an .mlir file or artifact (Graphviz DOT, SVG, PNG, PDF)")
    sp.add_argument("source")
    sp.add_argument("-o", "--output", help="a .dot file (default: stdout), or .svg/.png/.pdf drawn by Graphviz")
    sp.set_defaults(func=cmd_hcfg)

    sp = sub.add_parser("demo", help="compile an example, check it on every path, time it against eager")
    sp.add_argument("model", nargs="?", default="examples/branchy.py")
    sp.add_argument("--target", default="llvm", choices=["llvm", "cuda"])
    sp.add_argument("--backend", default="auto")
    sp.add_argument("--runs", type=int, default=200)
    sp.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except Exception as e:
        report_and_exit(e, prog="dycl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
