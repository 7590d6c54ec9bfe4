"""A compiled model follows changes to the live model it was compiled from
(dycl/runtime/live_guard.py): weights, training flags, folded attributes and
module-level constants changed after the compile run the model as eager Python
(a FallbackWarning), where they gave the old model's answer silently."""

import functools
import warnings

import pytest
import torch
from torch import nn

import dycl
from dycl.diagnostics import FallbackWarning

SCALE = 3.0


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.temperature = 1.0
        self.drop = nn.Dropout(0.5)
        self.act = nn.LeakyReLU(0.01)

    def forward(self, x):
        logits = self.act(self.drop(self.fc(x))) * SCALE
        if self.training:
            return logits * 0
        return torch.softmax(logits / self.temperature, -1)


def _scale(value):
    global SCALE
    SCALE = value


def _sgd_step(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model(torch.randn(2, 4)).sum().backward()
    opt.step()


CHANGES = {
    "optimizer step": _sgd_step,
    "in place under no_grad": lambda m: torch.no_grad()(m.fc.weight.mul_)(2.0),
    "load_state_dict": lambda m: m.load_state_dict({k: v + 1 for k, v in m.state_dict().items()}),
    "parameter replaced": lambda m: setattr(m.fc, "bias", nn.Parameter(torch.ones(3))),
    "submodule replaced": lambda m: setattr(m, "fc", nn.Linear(4, 3)),
    "train()": lambda m: m.train(),
    "attribute": lambda m: setattr(m, "temperature", 0.1),
    "global constant": lambda m: _scale(5.0),
    "forward of a submodule patched": lambda m: setattr(m.fc, "forward", lambda x: x[:, :3] * 100),
    # (found by a probe: torch.nn modules' settings and `.data` swaps were compiled in unseen)
    "a torch.nn module's setting": lambda m: setattr(m.act, "negative_slope", 2.0),
    "a weight given new data": lambda m: setattr(m.fc.weight, "data", torch.ones(3, 4)),
}


# A module's plain attribute or a torch.nn setting is compiled for again on the next
# call; after other changes (weights, as in training; code; globals) calls run the live
# model as eager.
RECOMPILED = {"attribute", "a torch.nn module's setting"}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_after_the_compile_is_seen(change):
    torch.manual_seed(0)
    model = Policy().eval()
    x = torch.randn(2, 4)
    cm = dycl.compile(model, [x], backend="torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # unchanged: the compiled program runs
        assert torch.allclose(cm(x), model(x))
    try:
        CHANGES[change](model)
        torch.manual_seed(1)  # (dropout in training mode draws)
        want = model(x)
        torch.manual_seed(1)
        if change not in RECOMPILED:
            with pytest.warns(FallbackWarning, match="after the compile"):
                got = cm(x)
            assert cm._variants == []
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", FallbackWarning)
                got = cm(x)
                assert torch.equal(cm(x), want)  # (the second call: the same variant)
            assert len(cm._variants) == 1
        assert torch.equal(got, want), change
    finally:
        _scale(3.0)


def test_the_guard_names_what_changed():
    model = Policy().eval()
    cm = dycl.compile(model, [torch.randn(2, 4)], backend="torch")
    assert cm._guard.changed() is None
    with torch.no_grad():
        model.fc.weight.add_(1)
    assert cm._guard.changed() == "fc.weight (parameter) was changed in place"


def test_torch_nn_settings_written_with_equal_values_keep_the_compiled_program():
    """A setting of a torch.nn module is watched through its module's dict version:
    `model.eval()` again, or an equal value written, is no change."""
    model = Policy().eval()
    x = torch.randn(2, 4)
    cm = dycl.compile(model, [x], backend="torch")
    model.act.negative_slope = 0.01 * 1.0  # (another float object, equal)
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        assert torch.equal(cm(x), model(x))
    assert cm._guard.changed() is None
    model.act.negative_slope = 0.5
    assert cm._guard.changed() == "act.negative_slope (LeakyReLU setting) changed"
    model.fc.weight.data = torch.zeros(3, 4)
    assert cm._guard.changed() == "fc.weight (parameter) was given new data"


def test_storages_moved_to_shared_memory_are_no_change():
    """A parallel build (`jobs=2`) hands the model to worker processes, which moves
    its storages to shared memory (other data pointers, same storages and values):
    the guard called that "given new data" and every later call ran eager."""
    model = Policy().eval()
    x = torch.randn(2, 4)
    cm = dycl.compile(model, [x], backend="torch")
    model.share_memory()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        assert torch.equal(cm(x), model(x))
    assert cm._guard.changed() is None
    model.fc.weight.data = torch.zeros(3, 4)
    assert cm._guard.changed() == "fc.weight (parameter) was given new data"


def test_saving_after_a_change_is_an_error(tmp_path):
    """The calls notice a weight changed after the compile (they run the live model),
    but `save` wrote the compiled program with the old weights, and the loaded
    artifact answered with them without a word (found by a probe)."""
    from dycl.diagnostics import DyclError

    model = Policy().eval()
    cm = dycl.compile(model, [torch.randn(2, 4)], backend="torch")
    cm.save(tmp_path / "fresh")  # unchanged: saves
    with torch.no_grad():
        model.fc.weight.add_(1)
    with pytest.raises(DyclError, match=r"cannot save: fc.weight \(parameter\) was changed in place after the "
                                        r"compile(.|\n)*compile the model again"):
        cm.save(tmp_path / "stale")
    assert not (tmp_path / "stale").exists()


def test_compiling_a_specialisation_changes_nothing_the_guard_sees():
    """Compile-time runs restore the weights they touched with their version
    counters: a specialisation compiled on first use sent every later call of the
    first compiled model to eager."""
    model = Policy().eval()
    cm = dycl.compile(model, [torch.randn(2, 4)], backend="torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        cm(torch.randn(5, 4))  # another shape: compiled now
        assert cm._guard.changed() is None
        x = torch.randn(2, 4)
        assert torch.allclose(cm(x), model(x))


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4)])

    def scale(self, x):
        return x * 2

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.scale(x) if x.sum() > 0 else -x


def _hooked(model):
    handle = nn.modules.module.register_module_forward_hook(lambda mod, i, o: o * 10)
    return handle.remove


CODE_CHANGES = {
    "a module appended to a container": lambda m: m.blocks.append(nn.Linear(4, 4)) and None,
    "a helper method patched on the instance": lambda m: setattr(m, "scale", lambda x: x * 7),
    "a helper method patched on the class": lambda m: setattr(Blocks, "scale", lambda self, x: x * 5),
    "the class's forward replaced": lambda m: setattr(Blocks, "forward", lambda self, x: x + 3),
    "a global forward hook": _hooked,
}


@pytest.mark.parametrize("change", list(CODE_CHANGES))
def test_code_changed_after_the_compile_is_seen(change):
    """What nn.Module.__call__ runs, changed after the compile (found by a probe: each
    gave the old program's answer)."""
    scale, forward = Blocks.scale, Blocks.forward
    model = Blocks().eval()
    x = torch.ones(2, 4)
    cm = dycl.compile(model, [x], backend="torch")
    undo = None
    try:
        undo = CODE_CHANGES[change](model)
        want = model(x)
        with pytest.warns(FallbackWarning, match="after the compile"):
            got = cm(x)
        assert torch.equal(got, want)
    finally:
        Blocks.scale, Blocks.forward = scale, forward
        if callable(undo):
            undo()


OFFSET = torch.tensor([0.5, -1.0, 2.0])
COUNTS = torch.zeros(3)


class ReadsOutsideTensors(nn.Module):
    def forward(self, x, w=torch.tensor([1.0, 2.0, 3.0])):
        return x * w + OFFSET


class UpdatesOutsideTensors(nn.Module):
    def forward(self, x, seen=torch.zeros(3)):
        seen.add_(x.sum(0))
        COUNTS[0] = COUNTS[0] + 1
        COUNTS[1] += x.sum()
        return x * seen + COUNTS


@pytest.mark.parametrize("change", ["in place", "rebound"])
def test_tensors_held_outside_the_model_are_guarded(change):
    """A global tensor and a tensor default argument are constants of the compiled
    program (they were fallback regions); a later change to either is seen."""
    global OFFSET
    model, x = ReadsOutsideTensors(), torch.randn(2, 3)
    cm = dycl.compile(model, [x], backend="torch", fallback="error")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        assert torch.equal(cm(x), model(x))
    old = OFFSET
    try:
        if change == "in place":
            OFFSET.mul_(3)
        else:
            OFFSET = torch.tensor([7.0, 7.0, 7.0])
        with pytest.warns(FallbackWarning, match="after the compile"):
            assert torch.equal(cm(x), model(x))
    finally:
        OFFSET = old.copy_(torch.tensor([0.5, -1.0, 2.0]))
    default = ReadsOutsideTensors.forward.__defaults__[0]
    cm = dycl.compile(model, [x], backend="torch", fallback="error")
    try:
        default.add_(1)
        with pytest.warns(FallbackWarning, match="held outside the model"):
            assert torch.equal(cm(x), model(x))
    finally:
        default.sub_(1)


def test_forward_updating_tensors_held_outside_the_model_runs_as_eager():
    """`seen.add_(...)` on a default argument and `COUNTS[0] = ...` on a global: eager's
    objects change from call to call, which a constant of the program cannot."""
    xs = [torch.randn(2, 3, generator=torch.Generator().manual_seed(s)) for s in range(3)]
    seen = UpdatesOutsideTensors.forward.__defaults__[0]

    def reset():
        seen.zero_()
        COUNTS.zero_()

    model = UpdatesOutsideTensors()
    with pytest.warns(FallbackWarning):
        cm = dycl.compile(model, [xs[0]], backend="torch")
    assert [r["construct"] for r in cm.fallbacks] == ["forward"], cm.fallbacks
    assert "changes a tensor held outside the model in place" in cm.fallbacks[0]["reason"], cm.fallbacks
    reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # (nothing changed the model: no guard warning)
        got = [cm(x) for x in xs]
    reset()
    want = [model(x) for x in xs]
    reset()
    assert all(torch.equal(a, b) for a, b in zip(got, want))


class _PartialActivation(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = functools.partial(torch.nn.functional.leaky_relu, negative_slope=0.1)

    def forward(self, x):
        return self.act(x)


def test_a_partials_keywords_changed_after_the_compile_are_seen():
    model, x = _PartialActivation(), torch.tensor([[-1.0, 2.0]])
    cm = dycl.compile(model, [x], backend="torch")
    model.act.keywords["negative_slope"] = 5.0
    with pytest.warns(FallbackWarning, match="act changed"):
        got = cm(x)
    assert torch.equal(got, model(x))
