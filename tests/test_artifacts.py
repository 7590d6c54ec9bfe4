"""Artifacts are written whole or not at all, and never over a user's files."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import dycl

ROOT = Path(__file__).resolve().parents[1]


def _compile_cli(out, *extra):
    return [sys.executable, "-m", "dycl.cli", "compile", "examples/branchy.py:make_model", "--input", "1x16xf32",
            "-o", str(out), "--backend", "torch", *extra]


def test_output_naming_a_file_or_a_foreign_directory_is_refused(tmp_path, branchy):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    with pytest.raises(FileExistsError, match="is not a directory"):
        dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="torch", out_dir=a_file)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.csv").write_text("1,2")
    r = subprocess.run(_compile_cli(mine), capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1 and "exists and is not a dycl artifact" in r.stderr and "Traceback" not in r.stderr
    assert (mine / "data.csv").read_text() == "1,2" and a_file.read_text() == "mine"
    with pytest.raises(ValueError, match="must not be empty"):
        dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="torch", out_dir="")


@pytest.mark.slow
def test_a_killed_compile_leaves_the_previous_artifact_whole(tmp_path):
    out = tmp_path / "art"
    assert subprocess.run(_compile_cli(out), capture_output=True, cwd=ROOT).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    proc = subprocess.Popen(_compile_cli(out, "--backend", "onnxruntime"), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Killed once it has begun writing the new artifact beside the old one.
    deadline = time.monotonic() + 120
    while not any(any(d.iterdir()) for d in tmp_path.glob(".art.partial-*")):
        assert proc.poll() is None, "the compile finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before
    cm = dycl.load(out)
    x = torch.randn(1, 16)
    assert isinstance(cm(x), torch.Tensor)
    # A finished recompile replaces it whole.
    assert subprocess.run(_compile_cli(out, "--backend", "onnxruntime"), capture_output=True,
                          cwd=ROOT).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert {s["backend"] for s in manifest["subgraphs"].values()} == {"onnxruntime"}
    assert not any(p.suffix == ".pt2" for p in out.iterdir())  # nothing left of the old one


def test_calls_by_keyword_bind_as_python_does_meta_tensors_are_input_errors(branchy_compiled):
    _, cm = branchy_compiled
    x = torch.randn(1, 16)
    assert torch.equal(cm(x=x), cm(x))
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):  # as eager: a TypeError
        cm(y=x)
    with pytest.raises(dycl.InputError, match="missing 1 required positional argument: 'x'"):
        cm()
    with pytest.raises(dycl.InputError, match="got one on meta"):
        cm(torch.empty(1, 16, device="meta"))
    loaded = dycl.load(cm.path)  # without the model: it cannot compile other shapes
    with pytest.raises(dycl.InputError, match=r"expected shape/dtype 1x16 float32, got 2x16 float32"):
        loaded(torch.randn(2, 16))
