"""The whole program in one ONNX Runtime session (dycl/whole_program.py): every path
of a composed program gives what eager gives, special values included, and the
artifact says which program runs and why."""

from __future__ import annotations

import json
import threading

import pytest
import torch
from torch import nn

import dycl
from dycl.demo import load_example


def _same(want: torch.Tensor, got: torch.Tensor) -> bool:
    return want.shape == got.shape and bool(torch.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True))


@pytest.fixture
def always(monkeypatch):
    monkeypatch.setenv("DYCL_WHOLE_PROGRAM", "always")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["early_exit", "skipnet", "branchy", "shallow_deep",
                                  "router",  # an argmax read on the host (.item()), compared, passed to sub-DNNs
                                  "skipnet_rnn"])  # an LSTM state tuple made and taken apart on the host
def test_every_path_of_the_composed_program_equals_eager(name, always, tmp_path):
    model, example, paths = load_example(name)
    cm = dycl.compile(model, example, backend="onnxruntime", out_dir=tmp_path / "a")
    entry = cm.manifest["whole_program"]
    assert entry["used"] and entry["file"] == "program.onnx", entry
    assert "def forward_whole(" in (tmp_path / "a" / "host.py").read_text()
    assert not hasattr(cm.program, "sub_0")  # the split sub-DNNs are not loaded
    for path, inputs in paths.items():
        with torch.no_grad():
            want = model(*inputs)
        assert _same(want, cm(*inputs)), path
    loaded = dycl.load(tmp_path / "a")
    for path, inputs in paths.items():
        with torch.no_grad():
            assert _same(model(*inputs), loaded(*inputs)), path


@pytest.mark.slow
def test_special_values_take_eager_branches(always, tmp_path):
    """NaN and inf decide predicates (bool(nan) is True) and pass through max pooling as in eager."""
    model, example, paths = load_example("early_exit")
    cm = dycl.compile(model, example, backend="onnxruntime", out_dir=tmp_path / "a")
    assert cm.manifest["whole_program"]["used"]
    for fill in (float("nan"), float("inf"), -float("inf")):
        x = example[0].clone()
        x[0, ::3] = fill
        with torch.no_grad():
            want = model(x)
        assert _same(want, cm(x)), fill


@pytest.mark.slow
def test_threads_share_the_session(always, tmp_path):
    model, example, paths = load_example("early_exit")
    cm = dycl.compile(model, example, backend="onnxruntime", out_dir=tmp_path / "a")
    cases = list(paths.values()) * 20
    with torch.no_grad():
        wants = [model(*c) for c in cases]
    bad = []

    def run(k):
        for i in range(k, len(cases), 4):
            if not _same(wants[i], cm(*cases[i])):
                bad.append(i)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


class _Loop(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        while x.sum() < 10:
            x = x.abs() + 1 + self.fc(x).sigmoid()  # the sum grows by at least 4 a step
        return x


class _ReturnsInput(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return x * 2


class _PassesInputOn(nn.Module):
    """One branch hands the caller's tensor on through the join: eager returns it, not a copy."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            y = x
        else:
            y = self.fc(x)
        return y


@pytest.mark.slow
@pytest.mark.parametrize("model, why", [(_Loop(), "not composed: the host runs dycl.while"),
                                        (_ReturnsInput(), "forward returns one of its inputs"),
                                        (_PassesInputOn(), "forward returns one of its inputs")])
def test_programs_that_do_not_compose_stay_split(model, why, always, tmp_path):
    x = torch.randn(1, 4)
    cm = dycl.compile(model, [x], backend="onnxruntime", out_dir=tmp_path / "a")
    entry = cm.manifest["whole_program"]
    assert not entry["used"] and why in entry["why"], entry
    assert not (tmp_path / "a" / "program.onnx").exists()
    for v in (x, -x.abs(), x.abs() + 20):
        with torch.no_grad():
            assert _same(model(v), cm(v))
    v = x.abs() + 1
    assert (cm(v) is v) == (model(v) is v)


class _TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 3), nn.Linear(4, 2)

    def forward(self, x):
        h = self.a(x)
        if h.max().item() > 0.2:
            return h.relu(), (self.b(x), h.sum())
        return h, (self.b(x) * 2, h.mean())


@pytest.mark.slow
def test_tuple_results_keep_their_structure(always, tmp_path):
    model = _TwoHeads()
    x = torch.randn(1, 4)
    cm = dycl.compile(model, [x], backend="onnxruntime", out_dir=tmp_path / "a")
    assert cm.manifest["whole_program"]["used"], cm.manifest["whole_program"]
    for v in (x, x * 10, -x * 10, torch.full((1, 4), float("nan"))):
        with torch.no_grad():
            want = model(v)
        got = cm(v)
        assert type(got) is tuple and len(got) == 2 and type(got[1]) is tuple and len(got[1]) == 2
        for w, g in zip(torch.utils._pytree.tree_leaves(want), torch.utils._pytree.tree_leaves(got)):
            assert _same(w, g)


@pytest.mark.slow
def test_auto_measures_and_records_the_choice(monkeypatch, tmp_path):
    monkeypatch.setenv("DYCL_WHOLE_PROGRAM", "auto")
    model, example, paths = load_example("early_exit")
    cm = dycl.compile(model, example, out_dir=tmp_path / "a")
    entry = json.loads((tmp_path / "a" / "manifest.json").read_text())["whole_program"]
    assert set(entry["timings_us"]) == {"split", "whole"}, entry
    assert entry["why"].startswith("whole program: " if entry["used"] else "split host: "), entry
    assert (tmp_path / "a" / "program.onnx").exists() == entry["used"]
    for inputs in paths.values():
        with torch.no_grad():
            assert _same(model(*inputs), cm(*inputs))


def test_never_leaves_the_program_split(monkeypatch, tmp_path):
    monkeypatch.setenv("DYCL_WHOLE_PROGRAM", "never")
    model, example, _ = load_example("branchy")
    cm = dycl.compile(model, example, backend="onnxruntime", out_dir=tmp_path / "a")
    assert "whole_program" not in cm.manifest


def test_a_bad_mode_is_an_error(monkeypatch):
    from dycl.whole_program import mode

    monkeypatch.setenv("DYCL_WHOLE_PROGRAM", "sometimes")
    with pytest.raises(ValueError, match="DYCL_WHOLE_PROGRAM must be one of auto, always, never"):
        mode()


class _HostScalars(nn.Module):
    """Host scalars the composed graph computes: an int count compared with a float
    (int -> float), a float product, a bool read."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        n = int((x > 0).sum())
        if n > 2.5:
            return self.fc(x)
        if n * 0.5 > 0.9 or bool(x.max() > 1):
            return x * 3
        return x - 1


@pytest.mark.slow
def test_host_scalars_compose(always, tmp_path):
    model = _HostScalars()
    cm = dycl.compile(model, [torch.tensor([[1.0, 2.0, 3.0, -1.0]])], backend="onnxruntime", out_dir=tmp_path / "a")
    assert cm.manifest["whole_program"]["used"], cm.manifest["whole_program"]
    for row in ([1.0, 2.0, 3.0, -1.0], [2.0, 0.5, -3.0, -1.0], [0.5, -2.0, -3.0, -1.0], [1.5, -2.0, -3.0, -1.0],
                [float("nan")] * 4):
        x = torch.tensor([row])
        with torch.no_grad():
            assert _same(model(x), cm(x)), row


class _ExactCompare(nn.Module):
    """A run-time int compared with a run-time float: exactly, as Python does, in the
    composed graph too (as ints where the float holds the int's rounded value)."""

    def forward(self, ids, x):
        if int(ids.max()) > float(x.max()):
            return x * 2
        return x - 1


@pytest.mark.slow
def test_exact_int_float_comparisons_compose(always, tmp_path):
    model = _ExactCompare()
    example = [torch.tensor([3, 4]), torch.tensor([1.0])]  # (powers of two: exact in float32)
    cm = dycl.compile(model, example, backend="onnxruntime", out_dir=tmp_path / "a")
    assert cm.manifest["whole_program"]["used"], cm.manifest["whole_program"]
    for ids, t in (([2 ** 53 + 1, 1], 2.0 ** 53), ([2 ** 53, 0], 2.0 ** 53), ([3, 4], 3.5), ([2 ** 63 - 1, 0], 2.0 ** 63),
                   ([5, 0], float("nan"))):
        args = [torch.tensor(ids), torch.tensor([t])]
        with torch.no_grad():
            assert _same(model(*args), cm(*args)), (ids, t)


def test_a_bad_mode_fails_the_compile_before_building(monkeypatch, tmp_path):
    from dycl.diagnostics import UsageError

    monkeypatch.setenv("DYCL_WHOLE_PROGRAM", "sometimes")
    model, example, _ = load_example("branchy")
    with pytest.raises(UsageError, match="DYCL_WHOLE_PROGRAM must be one of"):
        dycl.compile(model, example, backend="onnxruntime", out_dir=tmp_path / "a")
    assert not (tmp_path / "a").exists()
