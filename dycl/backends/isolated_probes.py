"""A build's probe runs in a child process, for backends whose kernels end the
process on a failed check.

AOTInductor's kernels assert their indices inside OpenMP regions, where the
exception cannot leave the thread: `std::terminate`, SIGABRT. A probe that fits
the torch graph but not the kernel's own assumptions (a size input and a tensor
resized apart from it) then killed the compile. In a child, such a crash fails the
build, and the next backend of the chain takes the sub-DNN.

`python -m dycl.backends.isolated_probes DIR` runs the payload DIR/in.pt and
writes each probe's result to DIR/<k>.pt as it goes; it imports the runtime
loader only (not the compiler).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# The most a child may take for all probes of one build (they run in milliseconds).
TIMEOUT_S = 300


def run_probes(loader: str, backend: str, path: Path, target: dict[str, Any], inputs: list[list[Any]]) -> list[Any]:
    """Per probe: ("ok", outputs) or ("error", type name, message); the list ends
    early with ("crash", why) at a probe that ended the child."""
    import torch

    with tempfile.TemporaryDirectory(prefix="dycl_probes_") as tmp:
        torch.save({"loader": loader, "backend": backend, "path": str(path), "target": target, "inputs": inputs},
                   Path(tmp) / "in.pt")
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # (the tree dycl is imported from)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        try:
            proc = subprocess.run([sys.executable, "-m", "dycl.backends.isolated_probes", tmp], env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
            why = _ended(proc.returncode, proc.stderr)
        except subprocess.TimeoutExpired:
            why = f"it ran past {TIMEOUT_S} s"
        results = []
        for k in range(len(inputs)):
            done = Path(tmp) / f"{k}.pt"
            if not done.exists():
                results.append(("crash", why or "the probe process stopped without a result"))
                break
            results.append(torch.load(done, weights_only=False))
        return results


def _ended(code: int, stderr: str) -> str | None:
    """How the child ended, in words (None: normally)."""
    if code == 0:
        return None
    what = next((line.strip().removeprefix("what():").strip() for line in stderr.splitlines()
                 if line.strip().startswith("what():")), None)
    try:
        name = signal.Signals(-code).name if code < 0 else f"exit status {code}"
    except ValueError:
        name = f"signal {-code}"
    return f"it ended the process ({name}{': ' + what if what else ''})"


def main(directory: str) -> None:
    import torch

    from dycl.pyregion import to_torch
    from dycl.runtime.loaders import resolve

    payload = torch.load(Path(directory) / "in.pt", weights_only=False)
    run = resolve(payload["backend"], payload["loader"])(payload["path"], payload["target"])
    for k, inputs in enumerate(payload["inputs"]):
        try:
            out = to_torch(run(*inputs))
            result: Any = ("ok", list(out) if isinstance(out, (tuple, list)) else [out])
        except Exception as e:  # noqa: BLE001 (handed back to the parent, which decides)
            result = ("error", type(e).__name__, str(e))
        torch.save(result, Path(directory) / f"{k}.pt")


if __name__ == "__main__":
    main(sys.argv[1])
