"""Times the paper-size examples in eager mode and compiles each with dycl (ONNX Runtime
backend), one model at a time, each in its own process (so one that hangs can be
stopped), and checks the compiled model against eager on every branch input.

    python examples/paper/run_all.py [--timeout 300] [--backend onnxruntime] [model ...]
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = ["sdn_mobilenet", "sdn_vgg16", "sdn_resnet56", "sdn_wrn32_4", "skipnet_rnn38", "skipnet_ff38",
          "captioner_resnext50", "captioner_resnet101", "blockdrop110"]


def same(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape:
            return False
        if a.is_floating_point():
            return torch.allclose(a, b.to(a.dtype), rtol=1e-4, atol=1e-5)
        return torch.equal(a, b.to(a.dtype))
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def one(name: str, backend: str, compile_: bool) -> dict:
    import importlib

    import torch

    sys.path.insert(0, str(HERE))
    torch.set_grad_enabled(False)
    mod = importlib.import_module(name)
    rec = {"model": name}
    t = time.perf_counter()
    model = mod.make_model()
    rec["make_model_s"] = round(time.perf_counter() - t, 2)
    rec["params"] = sum(p.numel() for p in model.parameters())
    x = mod.example_inputs()
    model(*x)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        model(*x)
        times.append(time.perf_counter() - t)
    rec["eager_ms"] = round(1000 * sorted(times)[1], 1)
    paths = mod.branch_inputs()
    rec["paths"] = list(paths)
    if not compile_:
        return rec
    import dycl

    t = time.perf_counter()
    try:
        cm = dycl.compile(model, x, backend=backend)
    except Exception as e:  # noqa: BLE001 - the error is the result
        rec["compile_s"] = round(time.perf_counter() - t, 1)
        rec["compiled"] = False
        rec["error"] = f"{type(e).__name__}: {e}"
        return rec
    rec["compile_s"] = round(time.perf_counter() - t, 1)
    rec["compiled"] = True
    rec["fallbacks"] = [str(f) for f in getattr(cm, "fallbacks", [])]
    rec["equal"] = {}
    for pname, inp in paths.items():
        try:
            rec["equal"][pname] = same(model(*inp), cm(*inp))
        except Exception as e:  # noqa: BLE001
            rec["equal"][pname] = f"{type(e).__name__}: {e}"
    cm(*x)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        cm(*x)
        times.append(time.perf_counter() - t)
    rec["compiled_ms"] = round(1000 * sorted(times)[1], 1)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*", default=MODELS)
    ap.add_argument("--backend", default="onnxruntime")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print("RESULT " + json.dumps(one(args.models[0], args.backend, not args.no_compile)), flush=True)
        return
    for name in args.models:
        cmd = [sys.executable, __file__, "--child", "--backend", args.backend, name]
        if args.no_compile:
            cmd.append("--no-compile")
        t = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(json.dumps({"model": name, "timeout_s": args.timeout}), flush=True)
            continue
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if lines:
            rec = json.loads(lines[-1][7:])
        else:
            rec = {"model": name, "rc": proc.returncode, "stderr_tail": proc.stderr[-3000:]}
        rec["wall_s"] = round(time.perf_counter() - t, 1)
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
