"""Identical sub-DNNs are built once; rebuilds come from the disk cache unless weights or dycl change."""

import pytest
import torch

import dycl
from dycl import build_cache
from dycl.demo import max_abs_error

pytestmark = pytest.mark.slow


def test_second_compile_hits_the_cache_and_new_weights_miss(monkeypatch, tmp_path, branchy):
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    model = branchy.make_model()
    first = dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert first.report.cache_hits == 0
    second = dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert second.report.cache_hits == 3
    assert sum(second.report.backend_seconds.values()) < sum(first.report.backend_seconds.values())
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert torch.equal(first(*x), second(*x))
            assert max_abs_error(model(*x), second(*x)) <= 1e-5
        model.b.weight.add_(1.0)  # only sub-DNNs using `b` must be rebuilt
    third = dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert third.report.cache_hits == 2
    with torch.no_grad():
        x = branchy.branch_inputs()["b"]
        assert max_abs_error(model(*x), third(*x)) <= 1e-5


def test_identical_sub_dnns_are_built_once(monkeypatch, tmp_path):
    import captioner

    monkeypatch.setenv("DYCL_CACHE_DIR", "off")
    model = captioner.make_model()
    cm = dycl.compile(model, captioner.example_inputs(), backend="torch")
    assert cm.report.deduplicated >= 1
    with torch.no_grad():
        for x in captioner.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5


def test_an_edited_dycl_never_reuses_builds(monkeypatch, tmp_path, branchy):
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    model = branchy.make_model()
    dycl.compile(model, branchy.example_inputs(), backend="tvm")
    assert dycl.compile(model, branchy.example_inputs(), backend="tvm").report.cache_hits == 3
    monkeypatch.setattr(build_cache, "_VERSIONS", None)
    monkeypatch.setattr(build_cache, "_source_digest", lambda: "edited-sources")
    assert dycl.compile(model, branchy.example_inputs(), backend="tvm").report.cache_hits == 0


def test_a_damaged_cache_entry_is_rebuilt_not_reused(monkeypatch, tmp_path, branchy, capsys):
    """Swapped, truncated or emptied files in an entry: discarded with a note, rebuilt."""
    import json

    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    model = branchy.make_model()
    dycl.compile(model, branchy.example_inputs(), backend="onnxruntime")
    entries = sorted((tmp_path / "cache" / "builds").iterdir())
    assert len(entries) == 3
    onnx = [sorted(e.glob("*.onnx"))[0] for e in entries]
    onnx[0].write_bytes(onnx[0].read_bytes()[:100])  # truncated
    onnx[1].write_bytes(onnx[2].read_bytes())  # swapped with another sub-DNN's
    (entries[2] / "done").write_text("")  # emptied marker
    capsys.readouterr()
    cm = dycl.compile(model, branchy.example_inputs(), backend="onnxruntime")
    assert cm.report.cache_hits == 0
    assert capsys.readouterr().err.count("discarding a damaged build-cache entry") == 3
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5
    for e in entries:  # stored anew, whole
        done = json.loads((e / "done").read_text())
        assert set(done["sha256"]) == {p.name for p in e.iterdir() if p.name != "done"}


def test_concurrent_compiles_share_the_cache_without_tearing_it(tmp_path, branchy):
    """Four processes compile the same model into one cache at once: each artifact is
    right, every entry is whole, and the next compile reuses them all."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    cache = tmp_path / "cache"
    env = {**os.environ, "DYCL_CACHE_DIR": str(cache)}
    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "dycl.cli", "compile", "examples/branchy.py:make_model", "--input", "1x16xf32",
           "--backend", "onnxruntime", "-o"]
    procs = [subprocess.Popen([*cmd, str(tmp_path / f"art{i}")], cwd=root, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0 and "discarding" not in err, err
    model = branchy.make_model()
    with torch.no_grad():
        for i in range(4):
            cm = dycl.load(tmp_path / f"art{i}")
            for x in branchy.branch_inputs().values():
                assert max_abs_error(model(*x), cm(*x)) <= 1e-5
    assert not [p for p in (cache / "builds").iterdir() if ".tmp" in p.name]  # no staging left behind
    for entry in (cache / "builds").iterdir():
        assert build_cache._verified(entry) is not None, entry
    r = subprocess.run([*cmd, str(tmp_path / "again")], cwd=root, env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "discarding" not in r.stderr


def test_a_torn_or_foreign_backend_choice_is_measured_again(monkeypatch, tmp_path, branchy):
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    model = branchy.make_model()
    dycl.compile(model, branchy.example_inputs())
    choices = sorted((tmp_path / "cache" / "choices").iterdir())
    assert choices
    choices[0].write_text("")  # torn
    for c in choices[1:]:
        c.write_text('{"backend": "evil", "reason": "planted", "timings_us": {}}')  # not a candidate
    cm = dycl.compile(model, branchy.example_inputs())
    assert not any("planted" in v.get("why", "") for v in cm.subgraphs.values())
    assert {v["backend"] for v in cm.subgraphs.values()} <= {"torch", "onnxruntime", "tvm"}
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5


class _Act(torch.nn.Module):
    """The same IR for any activation: `dycl.call_module "act"` names the path only."""

    def __init__(self, act):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(4, 4)
        self.act = act

    def forward(self, x):
        h = self.act(self.fc(x))
        if h.sum() > 0:
            return h * 2
        return h


@pytest.mark.parametrize("backend", ["torch", "onnxruntime"])
def test_modules_of_another_class_or_setting_never_reuse_a_build(monkeypatch, tmp_path, backend):
    """A model whose `self.act` was a ReLU, then one whose `self.act` is a GELU (or a
    LeakyReLU of another slope), had the same key: the second reused the first's
    build and answered with a ReLU (max error 0.34), across processes too."""
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(1))
    for act in (torch.nn.ReLU(), torch.nn.GELU(), torch.nn.LeakyReLU(0.01), torch.nn.LeakyReLU(2.0)):
        model = _Act(act).eval()
        cm = dycl.compile(model, [x], backend=backend)
        assert max_abs_error(model(x), cm(x)) <= 1e-6, act
