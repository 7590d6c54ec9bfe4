"""A fallback region whose result the code after it was not compiled for (its size
follows data no compile-time stand-in showed, as DeepSpeed's top-2 MoE capacity
does): the call runs again as eager Python where nothing done before is left
visible, and stays a clear error where something is."""

import pytest
import torch

import dycl
from dycl.diagnostics import FallbackWarning
from dycl.region_effects import RegionEffects, region_effects
from models.data_sized_regions import DataSizedExperts, DataSizedExpertsCounting, DataSizedExpertsPrinting

# Row magnitudes past 50 make the experts keep more rows than on the compile's stand-ins.
INPUTS = [torch.randn(4, 4, generator=torch.Generator().manual_seed(s)) * scale
          for s, scale in ((1, 1.0), (2, 100.0), (3, 1.0), (4, 3000.0), (5, 0.5))]


def _compile(cls):
    model = cls().eval()
    with pytest.warns(FallbackWarning, match="runs? as Python"):
        cm = dycl.compile(model, [torch.randn(4, 4)], backend="torch")
    return model, cm


def test_a_region_sized_by_data_the_stand_ins_never_showed_runs_the_call_as_eager():
    """Was "the fallback region at ... returned (4, 4); the code after it was
    compiled for (2, 4)" on every such call (probe 23a, DeepSpeed top-2 without
    dropped tokens); now eager's answer, with one FallbackWarning that says why."""
    model, cm = _compile(DataSizedExperts)
    eager = DataSizedExperts().eval()
    with torch.no_grad():
        for i, x in enumerate(INPUTS):
            want = eager(x)
            with pytest.warns(FallbackWarning, match="compiled for .*such calls run the model as eager") \
                    if i == 1 else _no_warning():
                got = cm(x)
            assert got.shape == want.shape and torch.allclose(got, want), i


def test_the_call_runs_again_after_module_attributes_are_put_back():
    """The compiled code counted the call, logged its rows to a list attribute and
    set `self.last` before the mismatch: the program saves those at each call's
    start and puts them back, so eager's run counts the call once (a conditional
    `self.calls += 10` no compile-time run took is saved too: found in the source)."""
    model, cm = _compile(DataSizedExpertsCounting)
    eager = DataSizedExpertsCounting().eval()
    rows = model.rows
    with torch.no_grad(), pytest.warns(FallbackWarning, match="such calls run the model as eager"):
        for i, x in enumerate(INPUTS):
            want, got = eager(x), cm(x)
            assert got[1] == want[1] and torch.allclose(got[0], want[0]), i
            assert (model.calls, model.rows, model.last) == (eager.calls, eager.rows, eager.last), i
    assert model.rows is rows  # (the list itself, refilled: a name bound to it sees eager's rows)


def test_a_mismatch_after_output_was_printed_stays_an_error(capsys):
    """Running the call again would print twice: the mismatch is an error that says
    why the call cannot run as eager, never a second print nor a wrong answer."""
    model, cm = _compile(DataSizedExpertsPrinting)
    eager = DataSizedExpertsPrinting().eval()
    with torch.no_grad():
        assert torch.allclose(cm(INPUTS[0]), eager(INPUTS[0]))
        capsys.readouterr()
        with pytest.raises(RuntimeError, match=r"compiled for \(2, 4\).*cannot run again as eager Python"):
            cm(INPUTS[1])
    assert capsys.readouterr().out.count("rows kept") == 2  # (once per expert: the one run)


class _Owner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.count, self.log, self.table = 0, [], {}
        self.register_buffer("total", torch.zeros(()))


@pytest.mark.parametrize("statement, expected", [
    ("self.count += 1", ["sub:count"]),  # an int: the attribute is rebound
    ("self.log.append(x)", ["sub:log"]),  # a list: its contents are saved
    ("self.table[0] = x", ["sub:table"]),
    ("self.fresh = x", ["sub:fresh"]),
    ("self.total += 1", ["*"]),  # a tensor, in place
    ("self.total.add_(1)", ["*"]),
    ("self.log[0].append(x)", ["*"]),  # a list inside a list: not saved
    ("x.add_(1)", ["*"]),  # an argument
    ("torch.manual_seed(0)", []),  # (names no random draw: the runs would show one)
    ("y = torch.randn(2)", ["rng"]),  # (the global generators' states: saved and put back)
    ("y = torch.nn.functional.dropout(x, 0.1)", ["rng"]),  # (training=True by default)
    ("y = torch.randn(2, generator=self.gen)", ["*"]),  # (a generator of the model's own)
    ("y = self.rng.random()", ["*"]),
    ("y = torch.nn.functional.dropout(x, 0.1, training=self.training)", []),  # (the module is in eval mode)
    ("y = self.drop(x)", []),  # (a module: it draws in training mode only, as the runs would show)
    ("print(x)", ["*"]),
    ("ys = []\n    ys.append(x)", []),  # its own list
])
def test_what_a_region_may_change_is_read_from_its_source(statement, expected):
    """Writes on paths no compile-time run took (`if x.sum() > 0: self.hits += 1`)
    count too: the source says what they would change."""
    root = torch.nn.Module()
    root.sub = _Owner()
    root.sub.drop = torch.nn.Dropout(0.1)
    root.eval()
    code = (f"def __dycl_region(__dycl_root, x):\n    self = __dycl_root.get_submodule('sub')\n    {statement}\n"
            "    return ()\n")
    assert region_effects(code, root, RegionEffects(), {"torch": torch}) == expected


class _no_warning:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", FallbackWarning)

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


def test_state_changed_by_helpers_on_a_path_no_compile_time_run_took():
    """Such a path's effects were neither seen in the runs nor in the region's own
    source: the call ran again with them done twice (probe 24a: `self.n` 2 where
    eager has 1; a global list appended twice). The source of what the region calls
    (methods, helpers, submodules' forward) is read too."""
    from models import data_sized_regions as m

    x = torch.randn(4, 4)
    x[0, 0] = 100.0
    model, eager = m.RarePathHelpers().eval(), m.RarePathHelpers().eval()
    with pytest.warns(FallbackWarning, match="runs? as Python"):
        cm = dycl.compile(model, [torch.randn(4, 4)], backend="torch")
    with torch.no_grad(), pytest.warns(FallbackWarning, match="such calls run the model as eager"):
        assert torch.allclose(cm(x), eager(x))
    assert model.n == eager.n == 1

    model = m.RarePathGlobalLog().eval()
    with pytest.warns(FallbackWarning, match="runs? as Python"):
        cm = dycl.compile(model, [torch.randn(4, 4)], backend="torch")
    m.EVENTS.clear()
    with torch.no_grad(), pytest.raises(RuntimeError, match="cannot run again as eager Python"):
        cm(x)
    assert m.EVENTS == [1]


def test_random_draws_before_the_mismatch_are_drawn_again_from_the_same_states():
    """A region that draws (torch.rand, random.random) made the mismatch an error; the
    generators' states are now saved at the call's start and put back: eager's draws."""
    import random

    from models.data_sized_regions import DataSizedExpertsNoisy

    model, cm = _compile(DataSizedExpertsNoisy)
    eager = DataSizedExpertsNoisy().eval()
    with torch.no_grad(), pytest.warns(FallbackWarning, match="such calls run the model as eager"):
        for i, x in enumerate(INPUTS):
            torch.manual_seed(i)
            random.seed(i)
            want, after = eager(x), (torch.rand(1), random.random())
            torch.manual_seed(i)
            random.seed(i)
            got = cm(x)
            assert got.shape == want.shape and torch.allclose(got, want), i
            assert (torch.rand(1), random.random()) == after, i  # (the generators where eager left them)
