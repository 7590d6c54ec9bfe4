"""Every bad argument a user can give the CLIs is a diagnostic: `prog: error: ...` (or
`file:line:col: error:`), exit code 1, no traceback, and nothing written (issue #13)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MODEL = "examples/branchy.py:make_model"

FILES = {
    "syntax.py": "import torch\ndef make(:\n    pass\n",
    "raises.py": "def make():\n    raise RuntimeError('boom')\n",
    "long_weights.py": (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(16, 4)\n\n    def forward(self, x):\n"
        "        if x.sum() > 0:\n            return self.fc(x)\n        return self.fc(-x)\n\n"
        "def make():\n    return M()\n"
    ),
    "afile": "mine",
    "ok.mlir": "func.func @f() {\n  func.return\n}\n",
    "wrong.mlir": "func.func @f() -> i32 {\n  func.return\n}\n",
}

# (command and arguments; {d} is a scratch directory) -> what stderr must say
DYCL = [
    (["compile", "{d}/syntax.py:make", "--input", "1x4xf32"], "syntax.py:2:10: error: invalid syntax"),
    (["compile", "{d}/raises.py:make", "--input", "1x4xf32"], "raises.py:2:5: error: '{d}/raises.py:make' raised RuntimeError: boom"),
    (["compile", "{d}/nothere.py:make", "--input", "1x4xf32"], "dycl: error: model file '{d}/nothere.py' does not exist"),
    (["compile", "examples/branchy.py:nope", "--input", "1x16xf32"], "has no attribute 'nope'"),
    (["compile", MODEL, "--input", "1x16xf32", "--backend", "foo"], "dycl: error: unknown backend 'foo' (available:"),
    (["compile", MODEL, "--input", "1x16xf32", "--pipeline", "foo"], "dycl: error: unknown pipeline 'foo'"),
    (["compile", MODEL, "--input", "1x16xf32", "--jobs", "0"], "dycl: error: --jobs must be at least 1, got 0"),
    (["compile", MODEL, "--input", "1x16xf32", "--tune-trials", "-1"], "dycl: error: tune_trials must be >= 0"),
    (["compile", MODEL, "--input", "1x16xf32", "--dump-ir-after", "unroll-loop"],
     "dycl: error: unknown pass 'unroll-loop' to dump the IR after (pipeline dycl-default)"),
    (["compile", MODEL, "--input", "1x16xf32", "--print-ir-after", "shape-inference", "--print-ir-after", "bogus"],
     "dycl: error: unknown pass 'bogus' to dump the IR after (pipeline dycl-default) (available: all, frontend,"),
    (["import", MODEL, "--input", "1x16xf32", "--stop-after", "assign-backends"],
     "dycl: error: pass 'assign-backends' to stop after: pipeline dycl-default has no such stage (its stages: "
     "frontend, inline-calls,"),
    (["compile", MODEL, "--input", "1x16"], "dycl: error: bad --input '1x16'"),
    (["compile", MODEL, "--input", "2x8xf32"],
     "branchy.py:15:13: error: the model, run eagerly on the example inputs, raised RuntimeError: mat1 and mat2 shapes"),
    (["compile", "{d}/long_weights.py:make", "--input", "1x16xi64"],
     "long_weights.py:11:20: error: the model, run eagerly on the example inputs, raised RuntimeError: mat1 and mat2 must have the same dtype"),
    (["compile", MODEL, "--input", "1x16xf32", "-o", "{d}/afile"], "dycl: error: output '{d}/afile' exists and is not a directory"),
    (["compile", MODEL, "--input", "1x16xf32", "-o", ""], "dycl: error: the output directory must not be empty"),
    (["compile", MODEL, "--input", "1x16xf32", "-o", "/proc/dycl/out"], "dycl: error: cannot write the artifact '/proc/dycl/out'"),
    (["compile", MODEL, "--input", "1x16xf32", "-o", "{d}"], "dycl: error: output directory '{d}' exists and is not a dycl artifact"),
    (["run", "{d}", "--input", "1x16xf32"], "dycl: error: '{d}' is not a dycl artifact (no manifest.json)"),
    (["hcfg", "{d}"], "dycl: error: '{d}' is not a dycl artifact (no module.mlir)"),
    (["hcfg", "{d}/missing.mlir"], "dycl: error: No such file or directory: '{d}/missing.mlir'"),
]

OPT = [
    (["-p", "foo", "{d}/ok.mlir"], "dycl-opt: error: unknown pass 'foo' (dycl-opt --list-passes lists them)"),
    (["-p", "unroll-loop", "{d}/ok.mlir"], "did you mean 'unroll-loops'?"),
    (["-p", "unroll-loops{bogus=1}", "{d}/ok.mlir"], "unknown option 'bogus' for pass 'unroll-loops' (available: max-trip-count)"),
    (["-p", "unroll-loops{max-trip=1}", "{d}/ok.mlir"], "unknown option 'max-trip' for pass 'unroll-loops' (available: max-trip-count); did you mean 'max-trip-count'?"),
    (["-p", "unroll-loops{max-trip-count=abc}", "{d}/ok.mlir"], "bad options for pass 'unroll-loops'"),
    (["-p", "unroll-loops{", "{d}/ok.mlir"], "dycl-opt: error: bad pass pipeline at column 14: Expected argument name here"),
    (["{d}/binary.mlir"], "dycl-opt: error: the input is not UTF-8 text (byte 0xff at offset 2)"),
    (["{d}/nothere.mlir"], "dycl-opt: error: No such file or directory"),
    (["{d}/wrong.mlir"], "wrong.mlir:2:3: error:"),
    (["-p", "shape-inference", "{d}/ok.mlir"], "dycl-opt: error: the IR module has no 'dycl.model' attribute"),
]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad-input")
    for name, text in FILES.items():
        (d / name).write_text(text)
    (d / "binary.mlir").write_bytes(b"\x00\x01\xff\xfe")
    return d


def _check(cmd: list[str], expected: str, d: Path) -> None:
    before = sorted(p.name for p in d.iterdir())
    r = subprocess.run([a.replace("{d}", str(d)) for a in cmd], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert expected.replace("{d}", str(d)) in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr[-2000:]
    assert sorted(p.name for p in d.iterdir()) == before  # nothing written beside the inputs


@pytest.mark.slow
@pytest.mark.parametrize("args,expected", DYCL, ids=[" ".join(a[:1] + a[-2:]) for a, _ in DYCL])
def test_dycl_cli(scratch, args, expected):
    _check([sys.executable, "-m", "dycl.cli", *args, *([] if "-o" in args or args[0] != "compile" else ["-o", "{d}/out"])],
           expected, scratch)


@pytest.mark.slow
@pytest.mark.parametrize("args,expected", OPT, ids=[" ".join(a) for a, _ in OPT])
def test_dycl_opt(scratch, args, expected):
    _check([str(BIN / "dycl-opt"), *args], expected, scratch)
