"""Run CUDA artifacts built by `dycl compile --target cuda` on a GPU machine.

Needs only torch, the TVM runtime and dycl's runtime (dycl/runtime/: no xDSL, no
TVM compiler): each artifact's generated host.py is loaded on its own. For every artifact directory under ROOT
holding `reference.pt` (inputs per path and CPU-eager outputs, written by
tools/make_gpu_artifacts.py), it checks the GPU results against CPU eager and
against eager on the GPU, and times eager, torch.compile and dycl on the GPU.

    python tools/gpu_check.py ROOT [ROOT ...] [--no-torch-compile]
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import torch


def median_ms(fn, runs: int = 200) -> float:
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def max_err(a, b) -> float:
    if isinstance(a, torch.Tensor):
        return (a.detach().float().cpu() - b.detach().float().cpu()).abs().max().item() if a.numel() else 0.0
    return max((max_err(x, y) for x, y in zip(a, b)), default=0.0)


def to_torch(v):
    if isinstance(v, (tuple, list)):
        return type(v)(to_torch(x) for x in v)
    return torch.from_dlpack(v) if hasattr(v, "__dlpack__") and not isinstance(v, torch.Tensor) else v


def load_host(path: Path):
    spec = importlib.util.spec_from_file_location(f"host_{path.name}", path / "host.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load(str(path))


def main(roots: list[str], torch_compile: bool = True) -> int:
    """Every model with an artifact in each of `roots` (variants of one build, e.g.
    with and without CUDA graphs): checked and timed in one process, side by side."""
    examples = Path(__file__).resolve().parent.parent / "examples"
    sys.path[:0] = [str(examples), str(examples / "paper")]
    # dycl's kernels compute in FP32; so must the eager reference (TF32 convs and
    # matmuls, on by default for cuDNN, differ from FP32 by ~1e-3).
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, TF32 off")
    failures = 0
    first = Path(roots[0])
    for art in sorted(p for p in first.iterdir() if (p / "reference.pt").exists()):
        variants = {Path(r).name: Path(r) / art.name for r in roots}
        if not all((v / "reference.pt").exists() for v in variants.values()):
            continue
        ref = torch.load(art / "reference.pt")
        example = importlib.import_module(ref["example"])
        model = example.make_model()
        if "state" in ref:  # the weights the artifact was built from
            model.load_state_dict(ref["state"])
        model = model.cuda().eval()
        compiled_eager = torch.compile(model) if torch_compile else None
        programs = {name: load_host(v) for name, v in variants.items()}
        for name, (inputs, cpu_out) in ref["paths"].items():
            xs = [x.cuda() for x in inputs]
            with torch.no_grad():
                gpu_eager = model(*xs)
                t_eager = median_ms(lambda: model(*xs))
                t_compile = float("nan")
                if compiled_eager is not None:
                    try:
                        t_compile = median_ms(lambda: compiled_eager(*xs))
                    except Exception as e:  # an inductor bug must not hide dycl's numbers
                        print(f"{art.name}: torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
                        compiled_eager = None
                line = f"{art.name:14s} {name:14s} eager {t_eager:.3f} ms  torch.compile {t_compile:.3f} ms"
                for variant, program in programs.items():
                    out = to_torch(program(*xs))
                    t_dycl = median_ms(lambda: program(*xs))
                    again = to_torch(program(*xs))  # after 220 replays, and other paths' inputs before
                    err = max(max_err(cpu_out, out), max_err(gpu_eager, out), max_err(cpu_out, again))
                    ok = err <= 1e-4
                    failures += not ok
                    line += (f" | {variant}: {t_dycl:.3f} ms ({t_eager / t_dycl:.2f}x eager) err {err:.1e}"
                             f"{'' if ok else ' MISMATCH'}")
                print(line, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(main(args, torch_compile="--no-torch-compile" not in sys.argv))
