"""Fallback regions: what the frontend cannot translate runs as the model's own
Python in the host; the compiled model equals eager on every path — outputs,
exceptions, what it printed and the module's state after each call."""

import collections
import contextlib
import copy
import io
import json
import random
import subprocess
import sys
import warnings

import pytest
import torch
from torch import nn

import dycl
from models.fallbacks import CASES
import test_frontend_errors
from test_frontend_errors import CASES as REFUSED
from test_frontend_errors import make_module


@pytest.fixture(autouse=True)
def _model_files(tmp_path):
    test_frontend_errors.TMP = tmp_path


def _run(model, args):
    """(output or exception, printed text)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = model(*[a.clone() for a in args]), None
        except Exception as e:  # the compiled model must raise what eager raises
            result = None, (type(e), str(e))
    return result, out.getvalue()


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and bool(
            torch.allclose(a, b, atol=1e-5, equal_nan=True))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _state(m):
    """Every module's plain and tensor attributes, list lengths, parameters and buffers."""
    plain, lists, tensors = {}, {}, {}
    for path, sub in m.named_modules():
        for k, v in vars(sub).items():
            if isinstance(v, (int, float, bool, str, torch.dtype)) or v is None:
                plain[path, k] = v
            elif isinstance(v, list):
                lists[path, k] = len(v)
            elif isinstance(v, torch.Tensor) or (isinstance(v, tuple) and v and isinstance(v[0], torch.Tensor)):
                tensors[path, k] = v
    return plain, lists, {**{k: v.clone() for k, v in m.state_dict().items()}, **tensors}


def _states_equal(a, b):
    return a[0] == b[0] and a[1] == b[1] and a[2].keys() == b[2].keys() and all(_same(a[2][k], b[2][k]) for k in a[2])


def check_against_eager(eager, inputs, **options):
    """Compile a copy of `eager`; call both on every input and compare everything."""
    torch.manual_seed(0)
    compiled_model = copy.deepcopy(eager)
    cm = dycl.compile(compiled_model, [x.clone() for x in inputs[0]], **options)
    for args in inputs:
        (want, want_exc), want_out = _run(eager, args)
        (got, got_exc), got_out = _run(cm, args)
        assert want_exc == got_exc, (args, want_exc, got_exc)
        assert _same(want, got), (args, want, got)
        assert want_out == got_out
        assert _states_equal(_state(eager), _state(compiled_model))
        # an input updated in place by eager is updated by the compiled model too
        a, b = [x.clone() for x in args], [x.clone() for x in args]
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                eager(*a)
                cm(*b)
            except Exception:
                pass
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    return cm


@pytest.mark.parametrize("name", sorted(CASES))
def test_published_styles_match_eager(name):
    factory, inputs, n_regions, min_subgraphs = CASES[name]
    with torch.no_grad():
        cm = check_against_eager(factory().eval(), inputs, backend="torch")
    if n_regions is not None:
        assert sum(r["copies"] for r in cm.fallbacks) == n_regions, cm.fallbacks
    assert len(cm.subgraphs) >= min_subgraphs
    for r in cm.fallbacks:
        assert r["loc"].startswith("fallbacks.py:") or r["construct"] == "forward", r


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_every_refused_construct_runs_as_python(name, tmp_path):
    body, _ = REFUSED[name]
    model = make_module(body)
    inputs = [(torch.full((1, 4), v),) for v in (0.5, -0.5, 2.0, -3.0)] + [
        (torch.randn(1, 4, generator=torch.Generator().manual_seed(s)),) for s in range(3)]
    with torch.no_grad():
        cm = check_against_eager(model.eval(), inputs, backend="torch")
    assert cm.fallbacks, "the construct should run as Python"


@pytest.mark.parametrize("name", ["try", "with", "raise", "setitem"])
def test_error_mode_keeps_the_located_diagnostic(name):
    body, construct = REFUSED[name]
    with pytest.raises(dycl.FrontendError, match=r"\.py:\d+:\d+: error: .*" + construct.split("(")[0][:20]):
        dycl.compile(make_module(body), [torch.randn(1, 4)], backend="torch", fallback="error")


def test_one_warning_per_compile_and_explain_lists_regions():
    factory, inputs, _, _ = CASES["loop_with_logging"]
    with pytest.warns(dycl.FallbackWarning,
                      match=r"3 regions run as Python: fallbacks\.py:\d+:\d+ \(expression statement, x3\)") as w:
        cm = dycl.compile(factory(), list(inputs[0]), backend="torch")
    assert len(w) == 1
    assert w[0].filename == __file__  # the user's dycl.compile line, not dycl's own frames
    assert cm.hcfg.counts()["python_nodes"] == 3
    assert "shape=note" in cm.hcfg.to_dot()
    manifest = json.loads((cm.path / "manifest.json").read_text())
    # `with torch.no_grad()` is its body: the region is the print alone.
    # One record per source location: the print, in three copies (one per unrolled iteration).
    assert [(r["construct"], r["copies"]) for r in manifest["fallbacks"]] == [("expression statement", 3)]
    assert all(0 < r["tensor_op_share"] < 1 for r in manifest["fallbacks"])


def test_a_whole_untranslatable_forward_is_one_region():
    factory, inputs, _, _ = CASES["untranslatable"]
    cm = dycl.compile(factory(), list(inputs[0]), backend="torch")
    (region,) = cm.fallbacks
    assert region["construct"] == "forward" and region["tensor_op_share"] == 1.0
    assert "hooks" in region["reason"], region["reason"]


class DecoratedUntranslatable(nn.Module):
    @torch.no_grad()
    def forward(self, x):
        while x.norm() > 0.5:  # a rank more each iteration: no one type across iterations, Python
            x = x.unsqueeze(0) * 0.5
        return x


def test_a_whole_forward_region_is_located_in_the_users_file():
    """`@torch.no_grad()` on forward: the region was located in torch's _contextlib.py."""
    cm = dycl.compile(DecoratedUntranslatable(), [torch.ones(2, 4)], backend="torch")
    (region,) = cm.fallbacks
    assert region["construct"] == "forward" and region["loc"].startswith("test_fallback.py:"), region
    x = torch.full((2, 4), 3.0)
    assert torch.equal(cm(x), DecoratedUntranslatable()(x)) and cm(x).dim() == 7


def test_module_state_read_after_a_region_writes_it_is_not_folded():
    factory, inputs, _, _ = CASES["print_and_count"]
    cm = dycl.compile(factory(), list(inputs[0]), backend="torch")
    # the print runs as Python; `self.calls`, which forward changes, is read on the host each call
    assert [r["construct"] for r in cm.fallbacks] == ["expression statement"], cm.fallbacks
    assert "_read_state(rt.state_0, 'calls', 'int')" in (cm.path / "host.py").read_text()


def test_globals_and_mutable_defaults_are_run_time_state():
    import models.fallbacks as mod

    def calls(model, n):
        mod.CALLS = 0
        mod.GlobalCounter.forward.__defaults__[0].clear()
        outs = [model(torch.ones(1, 4)) for _ in range(n)]
        return [(o[1], o[2]) for o in outs], outs[-1][0], mod.CALLS, len(mod.GlobalCounter.forward.__defaults__[0])

    model = mod.GlobalCounter()
    with torch.no_grad():
        want = calls(model, 4)
        mod.CALLS = 7
        cm = dycl.compile(copy.deepcopy(model), [torch.ones(1, 4)], backend="torch")
        # compiling ran none of it for good: the global and the default list are as they were
        assert mod.CALLS == 7 and len(mod.GlobalCounter.forward.__defaults__[0]) == 4
        got = calls(cm, 4)
    assert want[0] == got[0] == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert torch.allclose(want[1], got[1]) and want[2:] == got[2:] == (4, 4)


def test_fallback_rejects_unknown_mode():
    with pytest.raises(ValueError, match="fallback must be one of python, error"):
        dycl.compile(CASES["untranslatable"][0](), [torch.randn(1, 4)], fallback="eager")


MODEL_FILE = '''
import torch
from torch import nn


class Logged(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.seen = 0

    def forward(self, x):
        h = self.fc(x)
        try:
            h = h / int(h.abs().sum() > 0)  # an int read from data: may fail, so runs as Python
        except ZeroDivisionError:
            pass
        self.seen += 1
        print("seen", self.seen)
        return torch.relu(h) if h.sum() > 0 else h


def make_model():
    torch.manual_seed(0)
    return Logged().eval()
'''


@pytest.mark.slow
def test_artifact_with_regions_reloads_in_a_fresh_process(tmp_path):
    """The regions' code and the model travel in the artifact; loading runs them."""
    src = tmp_path / "logged.py"
    src.write_text(MODEL_FILE)
    out = tmp_path / "art"
    r = subprocess.run([sys.executable, "-m", "dycl.cli", "compile", f"{src}:make_model", "--input", "1x4xf32",
                        "-o", str(out), "--explain", "--backend", "onnxruntime"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "fallback regions (run as Python): 2" in r.stdout  # (`self.seen += 1` is compiled: module state)
    assert "module state read on the host each call (forward changes it): seen" in r.stdout
    assert "dycl: note: 2 regions run as Python" in r.stderr
    src.unlink()  # the artifact carries the model's source
    x = torch.randn(1, 4, generator=torch.Generator().manual_seed(3))
    torch.save(x, tmp_path / "x.pt")
    probe = (
        "import torch, dycl\n"
        f"cm = dycl.load({str(out)!r})\n"
        f"x = torch.load({str(tmp_path / 'x.pt')!r})\n"
        "y1 = cm(x); y2 = cm(x)\n"
        f"torch.save((y1, y2), {str(tmp_path / 'y.pt')!r})\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "seen 1\nseen 2\n"
    sys.path.insert(0, str(tmp_path))
    src.write_text(MODEL_FILE)
    try:
        import importlib

        eager = importlib.import_module("logged").make_model()
    finally:
        sys.path.remove(str(tmp_path))
    with torch.no_grad():
        want = eager(x)
    y1, y2 = torch.load(tmp_path / "y.pt")
    assert torch.allclose(y1, want, atol=1e-5) and torch.allclose(y2, want, atol=1e-5)


def test_cli_error_mode_is_located(tmp_path):
    src = tmp_path / "logged.py"
    src.write_text(MODEL_FILE)
    r = subprocess.run([sys.executable, "-m", "dycl.cli", "compile", f"{src}:make_model", "--input", "1x4xf32",
                        "-o", str(tmp_path / "o"), "--fallback", "error"], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{src}:14:9: error: unsupported Python construct: try/except" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_one_compiled_model_called_from_many_threads(branchy_compiled):
    """TVM's VM is not re-entrant: calls are serialised, every result equals eager."""
    from concurrent.futures import ThreadPoolExecutor

    model, cm = branchy_compiled
    xs = [torch.randn(1, 16, generator=torch.Generator().manual_seed(s)) * (1 if s % 2 else -1) for s in range(16)]
    with torch.no_grad():
        want = [model(x) for x in xs]

    def worker(k):
        bad = 0
        for i in range(40):
            j = (k + i) % len(xs)
            bad += not torch.allclose(cm(xs[j]), want[j], atol=1e-5)
        return bad

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(worker, range(8))) == 0


def test_compile_leaves_the_example_inputs_alone():
    """Compiling runs the model (and its regions) on copies: an in-place update of the
    input changes the caller's tensor when the compiled model is called, not before."""
    model = make_module("x += 1.0\nreturn x * 2")
    example = torch.zeros(1, 4)
    cm = dycl.compile(model, [example], backend="torch")
    assert torch.equal(example, torch.zeros(1, 4))
    y = cm(example)
    assert torch.equal(example, torch.ones(1, 4)) and torch.equal(y, torch.full((1, 4), 2.0))


def test_a_model_in_training_mode_runs_as_eager():
    """BatchNorm in training mode uses batch statistics and updates its running ones:
    compiled sub-DNNs compute inference, so forward runs as eager (and says why)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))  # no .eval()
    twin = copy.deepcopy(model)
    cm = dycl.compile(twin, [torch.randn(3, 4)], backend="torch")
    assert [r["construct"] for r in cm.fallbacks] == ["forward"]
    assert "training mode" in cm.fallbacks[0]["reason"]
    assert twin[1].training  # compiling switched nothing to eval
    for s in range(3):
        x = torch.randn(3, 4, generator=torch.Generator().manual_seed(s))
        assert torch.equal(model(x), cm(x))
    assert torch.equal(model[1].running_mean, twin[1].running_mean)


def test_warnings_and_logging_happen_as_in_eager(caplog):
    model = make_module("import_warnings = __import__('warnings')\n"
                        "if x.sum() > 0:\n    import_warnings.warn('positive input', RuntimeWarning)\n"
                        "__import__('logging').getLogger('dycl-test').warning('called')\n"
                        "return x * 2")
    cm = dycl.compile(model, [torch.ones(1, 4)], backend="torch")
    caplog.clear()
    with pytest.warns(RuntimeWarning, match="positive input"):
        cm(torch.ones(1, 4))
    assert [r.getMessage() for r in caplog.records if r.name == "dycl-test"] == ["called"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm(-torch.ones(1, 4))  # the other path warns nothing


def test_the_manifest_lists_the_config_attributes_folded_in(tmp_path):
    from models.fallbacks import ConfigObjects

    dycl.compile(ConfigObjects().eval(), [torch.randn(1, 4)], backend="torch", out_dir=tmp_path / "art")
    folded = json.loads((tmp_path / "art" / "manifest.json").read_text())["folded_attributes"]
    names = {f.split(" @ ")[0] for f in folded}
    # read through an inherited helper, with getattr, and through nested objects
    assert {"config.is_decoder", "config.scale", "config.act", "opts.threshold", "table"} <= names, folded
    assert all(f.split(" @ ")[1].startswith("fallbacks.py:") for f in folded), folded


class EntropyExit(torch.nn.Module):
    """torch.distributions validates its argument with a data-dependent check, which
    shape inference cannot trace: that statement alone runs as Python (the whole
    forward did), the rest is compiled."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)
        self.h1, self.h2 = torch.nn.Linear(8, 4), torch.nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.a(x))
        logits = self.h1(h)
        ent = torch.distributions.Categorical(logits=logits).entropy()
        if ent.max() < 1.0:
            return logits
        return self.h2(torch.relu(self.b(h)))


def test_a_statement_a_pass_fails_on_runs_as_python_alone():
    torch.manual_seed(0)
    model = EntropyExit().eval()
    cm = dycl.compile(model, [torch.randn(1, 8)], backend="torch")
    # (Whether shape inference can trace the argument check depends on torch's fake-tensor
    # settings, which other tests in the process may change: at most that statement is Python.)
    assert [(r["construct"], r["loc"].split(":")[1]) for r in cm.fallbacks] in (
        [], [("assignment", str(EntropyExit.forward.__code__.co_firstlineno + 3))]), cm.fallbacks
    assert all("shape inference failed" in r["reason"] for r in cm.fallbacks)
    assert len(cm.subgraphs) >= 2  # the layers around it are compiled
    for s in (0.1, 10.0, 100.0):
        x = torch.randn(1, 8) * s
        assert torch.allclose(cm(x), model(x))


class ReseedsAndChecks(torch.nn.Module):
    """Calls made for their effect: as ops their unused results were dropped, so the
    seed was never set and the check never raised."""

    def forward(self, x):
        torch._assert(x.sum() > -100, "too negative")
        torch.manual_seed(0)
        noise = torch.randn(4)
        if x.sum() > 0:
            return x + noise
        return x - noise


def test_calls_made_for_their_effect_happen_as_in_eager():
    model = ReseedsAndChecks()
    cm = dycl.compile(model, [torch.ones(4)], backend="torch")
    for x in (torch.ones(4), -torch.ones(4)):
        torch.manual_seed(5)
        got, after = cm(x), torch.rand(1)
        torch.manual_seed(5)
        want, after_eager = model(x), torch.rand(1)
        assert torch.equal(got, want) and torch.equal(after, after_eager)
    with pytest.raises(AssertionError, match="too negative"):
        cm(torch.full((4,), -100.0))


class Noisy(torch.nn.Module):
    def forward(self, mu):
        return mu + torch.randn_like(mu)


def test_compiling_leaves_the_callers_random_stream_alone(tmp_path, monkeypatch):
    """Compiling runs the model and its builds' checks: a seeded call after a compile,
    or one that compiles a specialisation for a new shape, drew other numbers."""
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path))  # cold: the build checks run
    torch.manual_seed(0)
    want_next = torch.rand(1)
    torch.manual_seed(0)
    cm = dycl.compile(Noisy(), [torch.zeros(2, 2)])
    assert torch.equal(torch.rand(1), want_next)
    x = torch.zeros(5, 2)  # another shape: compiled on this call
    torch.manual_seed(0)
    want = Noisy()(x)
    torch.manual_seed(0)
    assert torch.equal(cm(x), want)


class DoublesInPlace(torch.nn.Module):
    def forward(self, x):
        x.mul_(2)  # an in-place update of the input: the model's Python, on the caller's tensor
        return x.sum(0)


def test_in_place_updates_reach_strided_and_offset_inputs():
    """Inputs that are not dense are copied for the backends; an update the model's
    Python made to the copy was lost for the caller."""
    cm = dycl.compile(DoublesInPlace(), [torch.ones(2, 4)], backend="tvm")
    base = torch.arange(16.0).reshape(4, 4)
    for view in (lambda t: t[:, ::2], lambda t: t[2:], lambda t: t.t()[:2]):
        mine, theirs = base.clone(), base.clone()
        got = cm(view(mine)) if view(mine).shape == (2, 4) else None
        if got is None:
            continue
        want = DoublesInPlace()(view(theirs))
        assert torch.equal(got, want) and torch.equal(mine, theirs)


class TryIndex(torch.nn.Module):
    def forward(self, x, idx):
        try:
            y = x[idx]
        except IndexError:
            y = x[:1]
        return y * 2 if y.sum() > 0 else y


def test_try_around_indexing_by_an_input():
    """An index that is an input (a block argument) crashed the frontend's check of
    what a try body may raise (a raw AttributeError)."""
    model = TryIndex()
    args = (torch.ones(3), torch.tensor([0, 2]))
    with pytest.raises(dycl.FrontendError, match=r"try/except whose body may raise at run time"):
        dycl.compile(model, args, backend="torch", fallback="error")
    cm = dycl.compile(model, args, backend="torch")
    for idx in (torch.tensor([0, 2]), torch.tensor([5])):
        assert torch.equal(cm(torch.ones(3), idx), model(torch.ones(3), idx))


class LazyAttribute(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        scale = getattr(self, "scale", 1.0)  # absent: the default
        return self.fc(x) * scale


class SetsItLater(LazyAttribute):
    def forward(self, x):
        scale = getattr(self, "scale", 1.0)
        self.scale = scale + 1.0  # state: the next call reads the new value
        return self.fc(x) * scale


def test_getattr_with_a_default_on_a_module():
    """`getattr(self, name, default)` ignored the default ("has no attribute")."""
    torch.manual_seed(0)
    model = LazyAttribute()
    cm = dycl.compile(model, [torch.randn(1, 4)], backend="torch", fallback="error")
    x = torch.randn(1, 4)
    assert torch.allclose(cm(x), model(x))
    model, reference = SetsItLater(), SetsItLater()
    reference.load_state_dict(model.state_dict())
    cm = dycl.compile(model, [torch.randn(1, 4)], backend="torch")
    for _ in range(3):
        x = torch.randn(1, 4)
        assert torch.allclose(cm(x), reference(x))


class CountsOnItsClass(torch.nn.Module):
    calls = 0

    def forward(self, x):
        type(self).calls += 1
        return x * CountsOnItsClass.calls


class CountsThroughDunderClass(torch.nn.Module):
    calls = 0

    def forward(self, x):
        self.__class__.calls += 1
        return x * type(self).calls + self.calls


class CountsByClassName(torch.nn.Module):
    calls = 0

    def forward(self, x):
        if x.sum() > 0:
            CountsByClassName.calls = CountsByClassName.calls + 1
        return x * self.calls


@pytest.mark.parametrize("cls", [CountsOnItsClass, CountsThroughDunderClass, CountsByClassName])
def test_class_attributes_forward_changes_are_run_time_state(cls):
    """`type(self).calls += 1` then a read of the class attribute: the read was
    folded to its value at compile time (every call multiplied by 1)."""
    inputs = [torch.full((1, 3), v) for v in (1.0, -1.0, 2.0, 3.0)]
    cm = dycl.compile(cls(), [inputs[0]], backend="torch")

    def run(model):
        cls.calls = 0
        return [model(x) for x in inputs], cls.calls

    (want, want_calls), (got, got_calls) = run(cls()), run(cm)
    assert want_calls == got_calls and all(torch.equal(a, b) for a, b in zip(want, got)), (want, got)
    assert any("forward changes at run time" in r["reason"] for r in cm.fallbacks)


class BranchesOnLayout(torch.nn.Module):
    def forward(self, x):
        if x.is_contiguous() and x.stride(0) == x.shape[1]:
            return x + 1
        return x - 1


def test_a_forward_that_asks_for_strides_sees_the_callers_layout(tmp_path):
    """Passes fold `x.is_contiguous()` for the dense inputs the program takes; a
    strided input took the dense path silently. Such calls now run as eager."""
    cm = dycl.compile(BranchesOnLayout(), [torch.ones(2, 3)], backend="tvm")
    assert cm.manifest.get("layout_sensitive")
    cm.save(tmp_path / "a")
    for model in (cm, dycl.load(tmp_path / "a")):
        base = torch.arange(12.0).reshape(4, 3)
        for x in (base[:2], base[2:], base.t()[:2, :3].contiguous(), torch.arange(6.0).reshape(3, 2).t()):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert torch.equal(model(x), BranchesOnLayout()(x)), x.stride()


class ScriptedParts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is deprecated, not gone
            self.enc = torch.jit.trace(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()), torch.randn(1, 4))
            self.head = torch.jit.script(torch.nn.Linear(4, 4))
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.enc(x)
        if h.sum() > 0.5:
            return self.head(self.fc(h))
        return self.fc(h) - 1


def test_torchscript_submodules_run_as_torchscript(tmp_path):
    """A traced or scripted submodule sent the whole forward to Python (its
    parameters could not even be listed); now only its calls are Python."""
    model = ScriptedParts().eval()
    inputs = [(torch.full((1, 4), v),) for v in (1.0, -1.0, 0.1)]
    with torch.no_grad():
        cm = dycl.compile(model, list(inputs[0]), backend="torch")
        for args in inputs:  # (a deep copy of a traced module has other attributes: no state comparison)
            assert torch.equal(cm(*args), model(*args)), args
    assert {r["construct"] for r in cm.fallbacks} != {"forward"} and len(cm.subgraphs) >= 2, cm.fallbacks
    assert all("TorchScript submodule" in r["reason"] for r in cm.fallbacks)


class RotaryCache(torch.nn.Module):
    """LLaMA's rotary embedding: a longer input re-registers the cached buffer."""

    def __init__(self, dim=8, max_pos=4):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)), persistent=False)
        self._set_cos_sin_cache(max_pos)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        freqs = torch.outer(torch.arange(seq_len, dtype=torch.float32), self.inv_freq)
        self.register_buffer("cos_cached", torch.cat((freqs, freqs), -1).cos(), persistent=False)

    def forward(self, x):
        seq_len = x.shape[1]
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len)
        return x * self.cos_cached[:seq_len]


def test_a_buffer_registered_again_in_forward_is_not_a_constant():
    """nn.Module.register_buffer was inlined from torch's source, so the buffer it
    replaced was never seen as written: the longer call read the old 4-row cache."""
    model, twin = RotaryCache().eval(), RotaryCache().eval()
    cm = dycl.compile(twin, [torch.randn(2, 3, 8)])
    for n in (3, 6, 5, 9):
        x = torch.randn(2, n, 8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.allclose(cm(x), model(x)), n
    assert twin.max_seq_len_cached == model.max_seq_len_cached == 9


class CountsEveryOtherCall(torch.nn.Module):
    calls = 0

    def forward(self, x):
        type(self).calls += 1
        if self.calls % 2 == 0:
            return x * 2
        return x


class HelperCache(torch.nn.Module):
    def helper(self, x, cache=[]):
        if x[0] > 0:
            cache.append(1)
        return x * len(cache)

    def forward(self, x):
        return self.helper(x)


class KeyOnOnePath(torch.nn.Module):
    def forward(self, x):
        d = {"a": x}
        if x[0] > 0:
            d["b"] = x * 2
        return len(d), d.get("b", x + 100), d["b"] if "b" in d else d["a"] - 1


def test_compiling_runs_change_no_class_attribute_or_default_and_state_is_read_at_run_time():
    """Compiling ran forward once for good (a class counter off by one after it), a
    helper's `cache=[]` default was a fresh list per call, and a dict key added on
    one path was answered from the other path's dict."""
    x = torch.tensor([1.0, 2.0])
    CountsEveryOtherCall.calls = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = dycl.compile(CountsEveryOtherCall(), (x,))
        assert CountsEveryOtherCall.calls == 0
        assert [cm(x).tolist() for _ in range(3)] == [[1.0, 2.0], [2.0, 4.0], [1.0, 2.0]]
        cm = dycl.compile(HelperCache(), (x,))
        assert HelperCache.helper.__defaults__[0] == []
        assert [cm(x)[0].item() for _ in range(3)] == [1.0, 2.0, 3.0]
        HelperCache.helper.__defaults__[0].clear()
        cm = dycl.compile(KeyOnOnePath(), (x,))
    for v in (x, -x, torch.tensor([-1.0, 2.0])):
        got, want = cm(v), KeyOnOnePath()(v)
        assert got[0] == want[0] and all(torch.equal(a, b) for a, b in zip(got[1:], want[1:])), v


class SliceByDataThenMore(torch.nn.Module):
    def forward(self, x):
        n = int(x.sum().item())
        y = x[:, :max(1, n)]  # a region whose result's width follows n
        return y * 2


class SliceByDataOnOnePath(torch.nn.Module):
    def forward(self, x):
        n = int(x.sum().item())
        y = x[:, :n] if n > 0 else x
        return y * 2


@pytest.mark.parametrize("model", [SliceByDataThenMore(), SliceByDataOnOnePath()], ids=type)
def test_a_region_whose_result_size_follows_a_host_number(model):
    """The region's result was typed with the size of one stand-in run and checked
    against it: every call of another width raised RuntimeError. It runs twice at
    compile time now, and a size that differs is a `?` dimension."""
    cm = dycl.compile(model, [torch.full((2, 5), 0.05)])
    for v in (0.05, 0.25, 0.45, -1.0):
        x = torch.full((2, 5), v)
        assert torch.equal(cm(x), model(x)), v


class _GrowingCache:
    def __init__(self):
        self.keys = []

    def update(self, k, layer):
        if len(self.keys) <= layer:
            self.keys.append(k)
        else:
            self.keys[layer] = torch.cat([self.keys[layer], k], dim=-2)
        return self.keys[layer]


class _CachedLayer(torch.nn.Module):
    def forward(self, y, cache):
        k = cache.update(y, 0)
        return k.sum(-2, keepdim=True) / k.shape[-2]


class CacheInWhile(torch.nn.Module):
    """HF-style cache object updated in a region, in each iteration of a loop that
    may stop early: the region's result grows (1x3, 1x6, 1x9 rows)."""

    def __init__(self):
        super().__init__()
        self.layer = _CachedLayer()

    def forward(self, x):
        cache = _GrowingCache()
        y, step = x, 0
        while step < 3:
            y = y + self.layer(y, cache)
            step += 1
            if y.sum() > 20:
                break
        return y, step


def test_a_region_result_that_grows_with_an_object_it_updates():
    """Typed once per copy, each unrolled copy of the region saw the cache empty and
    was compiled for 3 rows; the second iteration returned 6 and every call raised
    (probe J). The region now runs twice when typed, the second time after the first's
    updates: the rows are a run-time size."""
    model = CacheInWhile()
    cm = dycl.compile(model, [torch.randn(1, 3, 4)], backend="torch")
    for scale in (0.1, 1.0, 3.0, 10.0):
        x = torch.randn(1, 3, 4) * scale
        want, got = model(x), cm(x)
        assert got[1] == want[1] and torch.allclose(got[0], want[0]), scale



class GenerateUntilRepeat(torch.nn.Module):
    """A `generate` helper whose loop runs as Python (it tests `tok.item() in seen`,
    a set only Python has) and returns the step scores as a tuple; forward stacks
    them in compiled code. The tuple's length is the number of steps."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 8)
        self.rnn = torch.nn.GRUCell(8, 8)
        self.out = torch.nn.Linear(8, 10)

    def generate(self, h):
        tok = torch.zeros(h.shape[0], dtype=torch.long)
        scores_all = ()
        seen = {0}
        while len(scores_all) < 8:
            h = self.rnn(self.emb(tok), h)
            scores = self.out(h)
            scores_all += (scores,)
            tok = scores.argmax(-1)
            if tok.item() in seen:
                break
            seen.add(tok.item())
        return scores_all, tok

    def forward(self, h):
        scores_all, tok = self.generate(h)
        return torch.stack(scores_all, 1).softmax(-1) * 2, tok + 1, len(scores_all)


def test_a_region_returning_a_tuple_as_long_as_its_loop_ran():
    """The region was typed as returning a tuple of the length its compile-time run
    gave, and every call whose loop ran another number of steps raised "returned a
    tuple whose length differs". Such a tuple is now held as a run-time list: the
    code after the region stays compiled (torch.stack on the host, a `?` dimension)."""
    torch.manual_seed(0)
    model = GenerateUntilRepeat().eval()
    cm = dycl.compile(model, [torch.randn(1, 8)], backend="torch")
    assert [f["construct"] for f in cm.fallbacks] != ["forward"], cm.report.fallback_attempts
    lengths = set()
    for k in range(16):
        x = torch.randn(1, 8, generator=torch.Generator().manual_seed(k)) * 3
        want, got = model(x), cm(x)
        lengths.add(want[2])
        assert got[2] == want[2] and torch.equal(got[1], want[1]) and torch.allclose(got[0], want[0]), k
    assert len(lengths) > 2, lengths

class NumpyTestedBlocks(torch.nn.Module):
    """BlockDrop's host test `if (action > 0.5).data.cpu().numpy().any():` per block."""

    def __init__(self):
        super().__init__()
        self.policy = torch.nn.Linear(8, 3)
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x):
        policy = (torch.sigmoid(self.policy(x)) > 0.5).float()
        for t, block in enumerate(self.blocks):
            action = policy[:, t]
            if (action > 0.5).data.cpu().numpy().any():
                x = x + action.view(-1, 1) * torch.relu(block(x))
        return x


def test_a_test_compiled_code_cannot_take_runs_alone_as_python():
    """A failure in an `if` test sent the whole statement (and, in a loop, the loop to
    the end of forward) to Python (probe M); the test alone runs as Python now, its
    numpy bool decides the branch on the host, the blocks stay compiled."""
    torch.manual_seed(0)
    model = NumpyTestedBlocks()
    cm = dycl.compile(model, [torch.randn(2, 8)], backend="torch")
    assert {f["construct"] for f in cm.fallbacks} == {"assignment"}
    for scale in (0.1, 1.0, 3.0, 10.0, -10.0):
        x = torch.randn(2, 8) * scale
        assert torch.allclose(cm(x), model(x)), scale


def _iou(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None] - inter)


class ListNms(torch.nn.Module):
    """NMS growing a Python list: its loop ends for real boxes (a box's IoU with
    itself is 1), never for random stand-ins."""

    def forward(self, boxes, scores):
        idx = torch.arange(scores.shape[0])
        keep = []
        while idx.numel() > 0:
            best = idx[scores[idx].argmax()].item()
            keep.append(best)
            idx = idx[_iou(boxes[best].view(1, 4), boxes[idx]).squeeze(0) < 0.4]
        return torch.tensor(keep)


def test_a_region_that_never_ends_on_stand_ins_does_not_hang_the_compile(monkeypatch):
    """The loop ran as a region, typed at compile time on random boxes, and the
    compile never ended (probe O). A run is stopped after RUN_SECONDS in the model's
    own code; that region is not typed, so more of forward runs as Python."""
    from dycl import region_typing

    monkeypatch.setattr(region_typing, "RUN_SECONDS", 0.5)
    torch.manual_seed(0)
    xy = torch.rand(8, 2) * 10
    boxes, scores = torch.cat([xy, xy + 1 + torch.rand(8, 2)], 1), torch.rand(8)
    model = ListNms()
    cm = dycl.compile(model, [boxes, scores], backend="torch")
    assert torch.equal(cm(boxes, scores), model(boxes, scores))


def test_a_save_after_calls_keeps_the_state_they_changed(tmp_path, monkeypatch):
    """forward counts its calls on the module (run as Python): an artifact saved
    after three calls continues from three, as the eager model does."""
    import importlib

    (tmp_path / "dycl_user_counter.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Counter(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n        self.calls = 0\n\n"
        "    def forward(self, x):\n        self.calls = getattr(self, 'calls') + 1\n"
        "        return self.fc(x) + self.calls\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    model = importlib.import_module("dycl_user_counter").Counter().eval()
    x = torch.ones(1, 4)
    with torch.no_grad():
        cm = dycl.compile(model, [x], backend="torch")
        assert cm.fallbacks
        for _ in range(3):
            cm(x)
        cm.save(tmp_path / "art")
        loaded = dycl.load(tmp_path / "art")
        assert torch.equal(loaded(x), model(x))  # both the fourth call
        assert model.calls == 4


def test_a_generator_helper_runs_as_python_at_its_call():
    """A method with `yield` called from forward: the call runs as Python, located at
    the caller's line (it once ran the whole forward, the reason an internal TypeError)."""
    from models.fallbacks import GeneratorHelper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = dycl.compile(GeneratorHelper().eval(), [torch.randn(2, 4)], backend="torch")
    assert cm.fallbacks[0]["construct"] != "forward"
    assert "generator function GeneratorHelper.states" in cm.fallbacks[0]["reason"], cm.fallbacks


class KvCache(torch.nn.Module):
    """A dict cache on the module, grown by every call (incremental decoding)."""

    def __init__(self):
        super().__init__()
        self.kv = torch.nn.Linear(4, 4)
        self.cache = {}

    def forward(self, x):
        k = self.kv(x)
        if "k" in self.cache:
            k = torch.cat([self.cache["k"], k], 1)
        self.cache["k"] = k
        return k.sum(1)


@pytest.mark.parametrize("backend", ["torch", "auto"])
def test_a_cache_filled_before_the_compile_keeps_growing(backend):
    """Compiled after a prefill (the cache holds 2 positions), every later step grows
    it: the sizes of what reads it are known at run time (they were the compile's,
    and the second step raised, leaving the cache behind eager's)."""
    torch.manual_seed(0)
    eager, compiled_model = KvCache().eval(), KvCache().eval()
    compiled_model.load_state_dict(eager.state_dict())
    prompt = torch.randn(1, 2, 4)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager(prompt), compiled_model(prompt)
        steps = [torch.randn(1, 1, 4) for _ in range(4)]
        cm = dycl.compile(compiled_model, [steps[0]], backend=backend)
        for x in steps:
            assert torch.allclose(cm(x), eager(x), atol=1e-5)
            assert compiled_model.cache["k"].shape == eager.cache["k"].shape


def _counter():
    n = 0

    def step():
        nonlocal n
        n += 1
        return n
    return step


class CountingBase(nn.Module):
    calls = 0

    def __init__(self):
        super().__init__()
        self.step = _counter()

    def forward(self, x):
        type(self).calls += 1
        return x * type(self).calls * self.step() if x.sum() > 0 else -x


def test_compile_time_runs_leave_class_counters_and_closures_alone():
    """`type(self).calls += 1` of a base class's attribute set `calls` on the subclass,
    and a closure's counter advanced: the first call counted from 2 (found by a probe)."""
    cls = type("Counting", (CountingBase,), {})
    model = cls()
    cm = dycl.compile(model, [torch.ones(2)], backend="torch")
    assert "calls" not in vars(cls) and CountingBase.calls == 0
    assert cm(torch.ones(2)).tolist() == [1.0, 1.0]
    assert cm(torch.ones(2)).tolist() == [4.0, 4.0]


def test_lazy_modules_run_as_python_until_compiled_again():
    """A LazyLinear not yet called has no weights: dycl.compile raised a raw ValueError."""
    class Lazy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.LazyLinear(3)

        def forward(self, x):
            h = self.lin(x)
            return h if h.sum() > 0 else -h

    torch.manual_seed(0)
    model, twin = Lazy(), None
    torch.manual_seed(0)
    twin = Lazy()
    cm = dycl.compile(model, [torch.randn(2, 4)], backend="torch")
    assert "not initialised yet" in cm.fallbacks[0]["reason"]
    x = torch.randn(2, 4)
    torch.manual_seed(1)
    got = cm(x)
    torch.manual_seed(1)
    assert torch.equal(got, twin(x))


def test_a_model_from_a_module_without_a_spec_compiles(tmp_path):
    """A class from a module made with types.ModuleType (or runpy) has no __spec__:
    saving its regions' sources raised a raw ValueError from find_spec."""
    import sys
    import types

    path = tmp_path / "spec_less_models.py"
    path.write_text("import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
                    "        super().__init__()\n        self.calls = 0\n\n    def forward(self, x):\n"
                    "        self.calls += 1\n        return x if x.sum() > 0 else -x\n")
    module = types.ModuleType("spec_less_models")
    module.__file__ = str(path)
    sys.modules["spec_less_models"] = module
    try:
        exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
        model = module.M()
        cm = dycl.compile(model, [torch.ones(2)], backend="torch")
        assert cm(-torch.ones(2)).tolist() == [1.0, 1.0] and model.calls == 1
    finally:
        del sys.modules["spec_less_models"]


class NumpyBetweenRegions(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, obs):
        a = (obs.detach().numpy() - 1.0) / 2.0
        y = self.fc(torch.from_numpy(a).float())
        return y, a


def test_a_numpy_array_handed_between_regions_stays_a_numpy_array():
    """The host handed region results on through `to_torch`, which made numpy arrays
    (they speak DLPack) torch tensors: `torch.from_numpy(a)` in the next region raised."""
    import numpy as np

    model, x = NumpyBetweenRegions(), torch.randn(2, 3)
    cm = dycl.compile(model, [x], backend="torch")
    (y, a), (want_y, want_a) = cm(x), model(x)
    assert isinstance(a, np.ndarray) and np.array_equal(a, want_a) and torch.equal(y, want_y)


@pytest.mark.parametrize("name", ["packed_gru", "filled_instances", "clipped_boxes", "segment_sums"])
def test_python_objects_between_statements_keep_the_rest_compiled(name):
    # (a PackedSequence or an object filled field by field sent the whole forward to
    # Python, after an internal error)
    factory, inputs, _, _ = CASES[name]
    with torch.no_grad():
        cm = check_against_eager(factory().eval(), inputs, backend="torch")
    assert all(r["construct"] != "forward" for r in cm.fallbacks), cm.fallbacks


class _ClampThroughAView(nn.Module):
    def forward(self, x):
        if x.mean().item() > 0.3:
            h = x.t()
        else:
            h = x[1:]
        h.data.clamp_(max=0.5)
        return h.sum()


class _UpdateThroughOneViewReadThroughAnother(nn.Module):
    def forward(self, x):
        h = x[1:]
        h2 = x.narrow(0, 1, 2)
        h2.div_(2)
        return h.sum()


class _SetItemOfASlice(nn.Module):
    def forward(self, x):
        h = x[1:]
        h[0] = 7
        return h.sum()


class _AddInALoop(nn.Module):
    def forward(self, x):
        for _ in range(2):
            x.add_(1)
        return x.sum()


class _SetItemInAWhile(nn.Module):
    def forward(self, x):
        i = 0
        while i < x.size(0):
            x[i] = x[i] * 2
            i += 1
        return x


class _AddWhileSmall(nn.Module):
    def forward(self, x):
        h = x
        while h.sum() < 10:
            h += 1
        return h.sum()


@pytest.mark.parametrize("cls", [_ClampThroughAView, _UpdateThroughOneViewReadThroughAnother, _SetItemOfASlice,
                                 _AddInALoop, _SetItemInAWhile, _AddWhileSmall])
def test_in_place_updates_through_views_of_an_argument_reach_the_callers_tensor(cls):
    """`h = x[1:]; h.clamp_(max=0.5)` (old code: `h.data.clamp_`): the update ran in a
    region on the program's copy of the view, and the caller's x kept its values; a
    view made before the region and read after it missed an update through another.
    Inside a loop (`for _ in range(2): x.add_(1)`, `x[i] = ...` in a while, `h += 1`
    on a name for x) the caller's x kept its values or only the first write (probe 27a):
    the loop's carried value was not traced to the input while the loop was lowered."""
    model = cls().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = dycl.compile(model, [torch.zeros(3, 4)], backend="torch")
    for x in (torch.ones(3, 4), torch.tensor([[-5.0] * 4, [1.0] * 4, [1.0] * 4])):
        mine, theirs = x.clone(), x.clone()
        assert torch.equal(cm(mine), model(theirs))
        assert torch.equal(mine, theirs)


class TeacherForcing(torch.nn.Module):
    """A seq2seq tutorial's `use_teacher_forcing = True if random.random() < ratio else False`."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x, ratio: float = 0.5):
        use_teacher_forcing = True if random.random() < ratio else False
        h = self.fc(x)
        return h * 2 if use_teacher_forcing else h - 1


def test_python_randomness_runs_as_python_and_says_so():
    """The region's reason named a function the user never wrote ("unknown function
    'builtins.Random.random'": the random module's hidden instance's method); it now
    says what the construct is, and each call draws as eager draws."""
    model = TeacherForcing()
    with pytest.warns(dycl.FallbackWarning):
        cm = dycl.compile(model, [torch.randn(2, 4)], backend="torch")
    (region,) = cm.fallbacks
    assert "Python-side randomness" in region["reason"] and "Random" not in region["reason"], region
    x = torch.randn(2, 4)
    random.seed(3)
    got = [cm(x) for _ in range(8)]
    random.seed(3)
    with torch.no_grad():
        want = [model(x) for _ in range(8)]
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    assert len({round(g[0, 0].item(), 5) for g in got}) == 2  # (both paths taken)


def test_an_internal_error_is_said_and_the_model_still_compiles(monkeypatch):
    """A bug in dycl (here: a KeyError planted in shape inference) made a compile attempt
    fail silently: the model compiled with more of it as Python, the bug's only trace
    a line in `cm.report.fallback_attempts`. It is now an InternalErrorWarning naming
    the exception and where it was raised (and the suite, whose warnings are errors,
    fails on any such bug)."""
    from dycl.passes import shape_inference

    real = shape_inference._Inferrer.run_autograd_aware

    def planted(self, op):
        if getattr(op, "method", None) is not None and op.method.data == "sum":
            raise KeyError("planted")
        return real(self, op)

    monkeypatch.setattr(shape_inference._Inferrer, "run_autograd_aware", planted)

    class Summed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            return h * 2 if h.sum() > 0 else h - 1

    model = Summed()
    with pytest.warns(dycl.InternalErrorWarning, match=r"internal error compiling Summed \(KeyError at "
                                                       r"test_fallback\.py:\d+: 'planted'\); this is a bug") as w, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", dycl.FallbackWarning)
        cm = dycl.compile(model, [torch.randn(2, 4)], backend="torch")
    assert w[0].filename == __file__
    for s in (1.0, -1.0):
        x = torch.full((2, 4), s)
        assert torch.equal(cm(x), model(x))


class PrintsItsShape(torch.nn.Module):
    def forward(self, x):
        print("shape", tuple(x.shape))
        return x * 2


def test_a_new_input_shape_does_not_warn_of_the_same_regions_again(capsys):
    """Each input shape compiled on first use warned "1 region runs as Python" again
    (probe 23a: three times for four shapes); the compile's warning says it once."""
    model = PrintsItsShape()
    with pytest.warns(dycl.FallbackWarning, match="1 region runs as Python"):
        cm = dycl.compile(model, [torch.randn(2, 4)], backend="torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error", dycl.FallbackWarning)
        for shape in ((3, 4), (5, 2), (2, 4)):
            x = torch.randn(shape)
            assert torch.equal(cm(x), x * 2)
    assert capsys.readouterr().out.count("shape") == 3


class ShrinkingBatchDecoder(torch.nn.Module):
    """Show, Attend and Tell's training forward: `decode_lengths = (lengths - 1).tolist()`,
    then per step `batch_size_t = sum([l > t for l in decode_lengths])` rows."""

    def __init__(self):
        super().__init__()
        self.cell = torch.nn.GRUCell(4, 4)

    def forward(self, x, lengths):
        lengths, order = lengths.sort(dim=0, descending=True)
        x = x[order]
        decode_lengths = (lengths - 1).tolist()
        h = torch.zeros(x.shape[0], 4)
        out = torch.zeros(x.shape[0], max(decode_lengths), 4)
        for t in range(max(decode_lengths)):
            batch_size_t = sum([n > t for n in decode_lengths])
            h = self.cell(x[:batch_size_t, t], h[:batch_size_t])
            out[:batch_size_t, t] = h
        return out, decode_lengths


def test_a_test_on_numbers_from_data_is_named_in_the_users_terms():
    """The region's reason was torch's own ("GuardOnDataDependentSymNode: Could not guard
    on data-dependent expression u1 > u0"), symbols the user never wrote."""
    model = ShrinkingBatchDecoder()
    with pytest.warns(dycl.FallbackWarning):
        cm = dycl.compile(model, [torch.randn(3, 6, 4), torch.tensor([4, 6, 2])], backend="torch")
    reasons = " ".join(r["reason"] for r in cm.fallbacks)
    assert "follow tensor data" in reasons and "GuardOnDataDependent" not in reasons and "u0" not in reasons, reasons
    for lengths in ([4, 6, 2], [2, 2, 2], [6, 5, 3]):
        x, n = torch.randn(3, 6, 4), torch.tensor(lengths)
        with torch.no_grad():
            want = model(x, n)
        got = cm(x, n)
        assert got[1] == want[1] and torch.allclose(got[0], want[0])


class ZeroesItsContiguousCopy(torch.nn.Module):
    def forward(self, x):
        y = x.contiguous()  # a copy for a strided x, x itself for a dense one
        y.zero_()
        return x.clone(), x.is_contiguous()


def test_python_regions_see_a_strided_input_as_eager_does():
    """Python regions got the dense copy the backends take: `x.contiguous()` was that
    copy itself, so zeroing it zeroed the result and, copied back, the caller's tensor
    (probe 25a); `x.is_contiguous()` said True. Such calls now run the model as eager."""
    with pytest.warns(dycl.FallbackWarning, match="runs? as Python"):
        cm = dycl.compile(ZeroesItsContiguousCopy(), [torch.ones(3, 4)], backend="torch")
    for make in (lambda: torch.ones(3, 4), lambda: torch.ones(4, 3).t(), lambda: torch.ones(4, 4)[1:]):
        mine, theirs = make(), make()
        got, want = cm(mine), ZeroesItsContiguousCopy()(theirs)
        assert torch.equal(got[0], want[0]) and got[1] == want[1] and torch.equal(mine, theirs)


def _accumulate(t, acc=[]):  # noqa: B006 (the shared default is the point)
    acc.append(1)
    return len(acc)


class StaticAndModuleDefaults(torch.nn.Module):
    @staticmethod
    def _count(t, seen=[]):  # noqa: B006
        seen.append(1)
        return len(seen)

    def forward(self, x):
        return x * self._count(x) + _accumulate(x)


def test_compiling_leaves_static_methods_and_functions_mutable_defaults_as_they_were():
    """The compile-time runs of a region appended to a @staticmethod's or a module
    function's `acc=[]` for good (probe 25a): the calls then counted 3, 4, 5."""
    x = torch.ones(1)
    with pytest.warns(dycl.FallbackWarning, match="runs? as Python"):
        cm = dycl.compile(StaticAndModuleDefaults(), (x,), backend="torch")
    assert StaticAndModuleDefaults._count.__defaults__[0] == [] and _accumulate.__defaults__[0] == []
    assert [cm(x).item() for _ in range(3)] == [2.0, 4.0, 6.0]


Halves = collections.namedtuple("Halves", ["full", "part"])


class WritesThroughATupleOfViews(nn.Module):
    def forward(self, x):
        h = x + 0
        o = Halves(h, h[:, 1])
        o.part.add_(10)  # h's column changes too
        return h


class WritesThroughADictOfViews(nn.Module):
    def forward(self, x):
        h = x * 2
        d = {"all": h, "row": h[0]}
        d["row"].fill_(1.0)
        return d["all"]


@pytest.mark.parametrize("cls", [WritesThroughATupleOfViews, WritesThroughADictOfViews])
def test_a_region_that_writes_through_a_container_of_views_gets_views(cls):
    """The region got a named tuple or dict whose items were the program's copies of
    `h` and of a view of it, which share nothing: the write through the view never
    reached `h`. Such a region now starts where the views are made."""
    x = torch.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dycl.FallbackWarning)
        cm = dycl.compile(cls(), (x,), backend="onnxruntime")
    assert torch.equal(cm(x), cls()(x))


class _HighwayExit(Exception):
    def __init__(self, message, exit_layer):
        self.message = message
        self.exit_layer = exit_layer


class _HighwayEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.thresholds = [0.5, 0.6]

    def set_thresholds(self, values):  # (never called by forward)
        self.thresholds = values

    def forward(self, x):
        for i in range(2):
            x = self.lin(x)
            if x.sum() < self.thresholds[i]:
                raise _HighwayExit((x,), i + 1)
        return (x,)


class CountsHighwayExits(nn.Module):
    """DeeBERT: the encoder raises at the exit, forward catches it and counts exits."""

    def __init__(self):
        super().__init__()
        self.encoder = _HighwayEncoder()
        self.exits = [0, 0, 0]

    def forward(self, x):
        try:
            logits = self.encoder(x)[0]
            exit_layer = 2
        except _HighwayExit as e:
            logits = e.message[0]
            exit_layer = e.exit_layer
        self.exits[exit_layer] += 1
        return logits


def test_a_region_calling_code_that_raises_its_own_exception_names_the_real_reason():
    """A region around `self.encoder(x)` took `x.sum()` and `_HighwayExit(...)` in the
    encoder for unknown calls that may write any attribute a method writes: the
    encoder's `thresholds` (written by a setter forward never calls) became run-time
    state, and the reason given was "a read of 'thresholds', which forward changes"."""
    torch.manual_seed(0)
    model, eager = CountsHighwayExits().eval(), None
    eager = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dycl.FallbackWarning)
        cm = dycl.compile(model, (torch.randn(4),), backend="torch")
    reasons = " ".join(f["reason"] for f in cm.fallbacks)
    assert "thresholds" not in reasons and "augmented assignment" in reasons, reasons
    for seed in range(6):
        x = torch.randn(4, generator=torch.Generator().manual_seed(seed)) * 3
        assert torch.equal(cm(x), eager(x))
        assert model.exits == eager.exits
    assert sorted(set(model.exits)) != [0]
