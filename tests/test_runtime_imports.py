"""Running a saved artifact needs dycl's runtime (dycl/runtime/), never its compiler."""

import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
COMPILER = ("xdsl", "dycl.compiler", "dycl.frontend", "dycl.passes", "dycl.dialects", "dycl.backends", "dycl.host")


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def test_loading_and_running_an_artifact_imports_no_compiler(branchy_compiled, branchy, tmp_path):
    _, cm = branchy_compiled  # tvm sub-DNNs
    (x,) = next(iter(branchy.branch_inputs().values()))
    torch.save(x, tmp_path / "x.pt")
    probe = (
        "import sys, torch, dycl\n"
        f"cm = dycl.load({str(cm.path)!r})\n"
        f"torch.save(cm(torch.load({str(tmp_path / 'x.pt')!r})), {str(tmp_path / 'out.pt')!r})\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] == 'xdsl' or m.startswith({COMPILER!r})))\n"
    )
    r = _run(probe)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"
    assert torch.equal(torch.load(tmp_path / "out.pt"), cm(x))


def test_a_host_program_needs_neither_the_compiler_nor_torch():
    # What a TVM-only host.py imports: its helpers and the TVM loader (which imports TVM when it loads).
    r = _run("import sys\nimport dycl.runtime.host_support, dycl.runtime.loaders.tvm\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('xdsl', 'torch', 'tvm', 'onnxruntime')"
             f" or m.startswith({COMPILER!r})))\n")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"


def test_builtin_backends_name_the_runtime_loaders():
    from dycl.backends.base import builtin_backend_names, get_backend
    from dycl.runtime.loaders import BUILTIN_LOADERS, resolve

    assert sorted(BUILTIN_LOADERS) == builtin_backend_names()
    for name in builtin_backend_names():
        assert get_backend(name).loader == BUILTIN_LOADERS[name]
        assert callable(resolve(name, BUILTIN_LOADERS[name]))
