"""dycl and dycl-opt as a user runs them: exit codes, diagnostics, reproducibility."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, input=stdin, cwd=ROOT)


@pytest.mark.slow
def test_import_then_dycl_opt_reproduces_compile(tmp_path):
    r = run("dycl", "import", "examples/branchy.py:make_model", "--input", "1x16xf32", "-o", str(tmp_path / "b.mlir"))
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "b.mlir").read_text()
    assert 'dycl.model = "examples/branchy.py:make_model"' in text and "dycl.if" in text
    opt = run("dycl-opt", str(tmp_path / "b.mlir"), "-p", "dycl-default", "--model", "examples/branchy.py:make_model")
    assert opt.returncode == 0, opt.stderr
    c = run("dycl", "compile", "examples/branchy.py:make_model", "--input", "1x16xf32", "-o", str(tmp_path / "out"),
            "--backend", "tvm")  # a fixed backend: no assign-backends attributes in module.mlir
    assert c.returncode == 0, c.stderr
    assert "HCFG: 6 nodes (3 sub-DNNs, 1 conditions, 0 loops), 6 edges" in c.stdout
    assert opt.stdout.strip() == (tmp_path / "out" / "module.mlir").read_text().strip()
    split = run("dycl-opt", str(tmp_path / "b.mlir"), "-p", "extract-hcfg,outline-subgraphs")
    assert split.returncode == 0, split.stderr
    assert split.stdout.count("dycl.call_subgraph @sub_") == 3


@pytest.mark.slow
def test_run_artifact(tmp_path):
    assert run("dycl", "compile", "examples/branchy.py:make_model", "-o", str(tmp_path / "o")).returncode == 0
    r = run("dycl", "run", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("output 0: shape [1, 16] float32")
    h = run("dycl", "hcfg", str(tmp_path / "o"))
    assert h.returncode == 0 and h.stdout.startswith("digraph hcfg")
    # .npy in, .npy out: every path of the model, equal to eager.
    import numpy as np
    import torch

    import branchy

    model = branchy.make_model()
    for k, (x,) in branchy.branch_inputs().items():
        np.save(tmp_path / f"{k}.npy", x.numpy())
        r = run("dycl", "run", str(tmp_path / "o"), "--input", str(tmp_path / f"{k}.npy"), "-o", str(tmp_path / k))
        assert r.returncode == 0, r.stderr
        with torch.no_grad():
            want = model(x).numpy()
        assert np.abs(np.load(tmp_path / k / "output_0.npy") - want).max() <= 1e-5


def test_dycl_opt_parse_error_is_located(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_text("func.func @f() {\n  %c = dycl.bogus\n}\n")
    r = run("dycl-opt", str(f))
    assert r.returncode == 1
    assert f"{f}:3:1" in r.stderr and "Operation dycl.bogus is not registered" in r.stderr
    assert "Traceback" not in r.stderr


def test_dycl_opt_verifier_error_is_located(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_text("func.func @f(%x: tensor<2x8xf32>) {\n  %c = dycl.to_bool %x : tensor<2x8xf32>\n  func.return\n}\n")
    r = run("dycl-opt", str(f))
    assert r.returncode == 1
    assert f"{f}:2:3: error: 'dycl.to_bool' needs a one-element tensor" in r.stderr
    assert "Traceback" not in r.stderr


def test_dycl_opt_pass_error_is_located(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_text(
        'builtin.module attributes {dycl.model = "examples/branchy.py:make_model"} {\n'
        "  func.func @forward(%x: tensor<1x3xf32>) -> !dycl.any {\n"
        '    %h = dycl.call_module "pre"(%x) : (tensor<1x3xf32>) -> !dycl.any\n'
        "    func.return %h : !dycl.any\n  }\n}\n"
    )
    r = run("dycl-opt", str(f), "-p", "shape-inference", "--model", "examples/branchy.py:make_model")
    assert r.returncode == 1
    assert f"{f}:3:5: error: shape inference failed" in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_pass_and_bad_input_spec():
    r = run("dycl-opt", "-p", "no-such-pass", stdin="")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    r = run("dycl", "compile", "examples/branchy.py:make_model", "--input", "1xq16", "-o", "/tmp/never")
    assert r.returncode == 1 and "bad --input '1xq16' at column 6" in r.stderr


def test_xdsl_universe_entry_point():
    from xdsl.universe import Universe

    multiverse = Universe.get_multiverse()
    assert "dycl" in multiverse.all_dialects
    assert "extract-hcfg" in multiverse.all_passes and "outline-subgraphs" in multiverse.all_passes
