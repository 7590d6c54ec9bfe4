"""forward's arguments as Python binds them: keywords, defaults, numbers, strings,
None and lists of tensors (FPN feature lists, `k`, `mode`, an optional mask).
These were refused ("example input 'k' is a int") or, at call time, "takes its
inputs by position"."""

import warnings

import pytest
import torch
from torch import nn

import dycl


class Heads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x, feats, k: int = 2, mode="sum", mask=None, scale=1.0):
        h = self.fc(x) * scale
        for f in feats:
            h = h + f
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        h = h * k
        return h.sum(-1) if mode == "sum" else h.amax(-1)


class Untranslatable(Heads):
    def forward(self, x, feats, k: int = 2, mode="sum", mask=None, scale=1.0):
        print(end="")  # (runs as Python)
        return super().forward(x, feats, k, mode, mask, scale)


@pytest.fixture(scope="module")
def heads():
    torch.manual_seed(0)
    x, feats = torch.randn(2, 4), [torch.randn(2, 4), torch.randn(2, 4)]
    model = Heads().eval()
    return model, dycl.compile(model, (x, feats, 3), fallback="error"), x, feats


def test_calls_bind_keywords_defaults_and_constants(heads):
    model, cm, x, feats = heads
    mask = torch.rand(2, 4) > 0.5
    calls = [((x, feats, 3), {}), ((x, feats), {"k": 3}), ((x,), {"feats": feats, "k": 3}),
             ((x, feats, 5), {}), ((x, feats[:1], 3), {}), ((x, feats, 3), {"mask": mask}),
             ((x, feats, 3, "max"), {}), ((x, feats), {}), ((x, feats, 3), {"scale": 2.5})]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args, kwargs in calls:
            assert torch.allclose(cm(*args, **kwargs), model(*args, **kwargs), atol=1e-6), (len(args), kwargs)
    assert cm.manifest["argument_spec"][2] == ["constant", "int", 3]


def test_calls_python_would_not_bind_raise_type_errors(heads):
    model, cm, x, feats = heads
    for args, kwargs in [((x,), {}), ((x, feats), {"bogus": 1}), ((x, feats, 3, "sum", None, 1.0, 9), {}),
                         ((x, feats), {"x": x})]:
        with pytest.raises(TypeError) as eager:
            model(*args, **kwargs)
        with pytest.raises(TypeError) as compiled:
            cm(*args, **kwargs)
        assert str(compiled.value) == str(eager.value)  # Python's own words ("takes from 2 to 7 ...")


def test_a_loaded_artifact_names_the_constant_it_was_compiled_for(heads, tmp_path):
    _, cm, x, feats = heads
    cm.save(tmp_path / "a")
    loaded = dycl.load(tmp_path / "a")
    assert torch.equal(loaded(x, feats, k=3), cm(x, feats, 3))
    with pytest.raises(dycl.InputError, match=r"compiled for x=a tensor, feats=\[a tensor, a tensor\], k=3.*"
                                              r"called with .*k=4"):
        loaded(x, feats, 4)


def test_a_forward_run_as_python_gets_its_arguments_by_name():
    torch.manual_seed(0)
    x, feats = torch.randn(2, 4), [torch.randn(2, 4)]
    model = Untranslatable().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = dycl.compile(model, {"x": x, "feats": feats, "mode": "max"})  # example inputs by name
        with torch.no_grad():
            assert torch.allclose(cm(x, feats, mode="max"), model(x, feats, mode="max"), atol=1e-6)


class KeywordOnly(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x, *, temperature=1.0, scale):
        return torch.softmax(self.fc(x) / temperature, -1) * scale


def test_keyword_only_parameters():
    """`forward(self, x, *, temperature=1.0)` sent the whole forward to Python."""
    torch.manual_seed(0)
    model, x = KeywordOnly().eval(), torch.randn(2, 8)
    cm = dycl.compile(model, {"x": x, "scale": 2.0}, fallback="error")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kwargs in ({"scale": 2.0}, {"scale": 2.0, "temperature": 3.0}, {"scale": 1.5}):
            assert torch.allclose(cm(x, **kwargs), model(x, **kwargs)), kwargs
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        cm(x, 2.0)


class AppendsToItsList(torch.nn.Module):
    def forward(self, x, feats: list):
        feats.append(x)
        return torch.stack(feats).sum(0)


def test_compiling_changes_none_of_the_example_arguments():
    """Compiling ran the model on the caller's own list (a specialisation compiled at a
    call grew the caller's list before the call itself)."""
    feats = [torch.ones(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dycl.compile(AppendsToItsList(), (torch.ones(2), feats))
    assert len(feats) == 1


def test_a_list_argument_forward_changes_is_the_callers():
    """`feats.append(x)` changed a list rebuilt from the program's inputs: the
    caller's list stayed as it was. Such a model is marked; its calls run it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = dycl.compile(AppendsToItsList(), (torch.ones(2), [torch.ones(2)]))
        assert cm.manifest["mutates_arguments"][0].startswith("feats (")
        mine, theirs = [torch.ones(2)], [torch.ones(2)]
        for _ in range(2):
            assert torch.equal(cm(torch.ones(2), mine), AppendsToItsList()(torch.ones(2), theirs))
    assert len(mine) == len(theirs) == 3


class VarArgs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, *args, **kwargs):
        return self.lin(x) * kwargs.get("scale", 1.0) + sum(args)


def test_a_forward_with_star_args_compiled_with_extra_positional_constants(tmp_path):
    """`forward(self, x, *args, **kwargs)` compiled with `(x, 1, 2)` (shape inference
    once refused the ints); calls with other *args or with **kwargs run the model."""
    torch.manual_seed(0)
    model = VarArgs().eval()
    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = dycl.compile(model, (x, 1, 2), backend="torch", out_dir=tmp_path / "a")
        with torch.no_grad():
            for args, kwargs in [((x, 1, 2), {}), ((x, 3, 4), {}), ((x,), {}), ((x, 1), {}), ((x, 1, 2), {"scale": 2.0})]:
                assert torch.equal(cm(*args, **kwargs), model(*args, **kwargs)), (args, kwargs)
            assert torch.equal(dycl.load(tmp_path / "a")(x, 1, 2), model(x, 1, 2))


class KwargsForward(nn.Module):
    """transformers' style: named parameters, then **kwargs."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(32, 4)

    def forward(self, input_ids, attention_mask=None, return_dict=True, **kwargs):
        h = self.emb(input_ids)
        if attention_mask is not None:
            h = h * attention_mask[..., None]
        if kwargs.get("scale"):
            h = h * kwargs["scale"]
        return {"last_hidden_state": h} if return_dict else (h,)


def test_a_forward_with_kwargs_takes_its_named_parameters_by_keyword():
    """Every keyword call raised 'takes its tensor inputs by position' and a compile
    by name a UsageError (found by a probe of transformers-style code); keywords into
    **kwargs run the model, as documented."""
    model = KwargsForward().eval()
    ids, mask = torch.tensor([[5, 6, 7]]), torch.tensor([[1.0, 0.0, 1.0]])
    for cm in (dycl.compile(model, (ids,), backend="torch"),
               dycl.compile(model, {"input_ids": ids, "attention_mask": mask}, backend="torch")):
        for kwargs in ({"input_ids": ids}, {"input_ids": ids, "attention_mask": mask}):
            want = model(**kwargs)["last_hidden_state"]
            assert torch.equal(cm(**kwargs)["last_hidden_state"], want)
        with pytest.warns(dycl.FallbackWarning, match="keywords into it"):
            got = cm(ids, scale=2.0)
        assert torch.equal(got["last_hidden_state"], model(ids, scale=2.0)["last_hidden_state"])


class StarArgs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, *rest, **options):
        h = self.lin(x)
        for r in rest:
            h = h + r
        if len(rest) > 1 and rest[1].sum() > 0:
            h = -h
        return h, len(options)


def test_a_forward_with_star_args_and_kwargs_is_compiled_not_run_as_python():
    """`*rest` is the tuple of the example's extra arguments and `**options` an empty
    dict: forward compiles (it ran whole as Python: 'unsupported signature'). A call
    with more positional arguments than the compile's runs the model (it raised
    eager's TypeError for a forward that takes them)."""
    torch.manual_seed(0)
    model = StarArgs().eval()
    x, a, b = torch.randn(2, 4), torch.randn(2, 4), torch.randn(2, 4)
    cm = dycl.compile(model, (x, a, b), backend="torch")
    assert cm.fallbacks == []
    for args in [(x, a, b.abs()), (x, a, -b.abs())]:  # both paths
        got, want = cm(*args), model(*args)
        assert torch.equal(got[0], want[0]) and got[1] == want[1] == 0
    assert dycl.compile(KwargsForward().eval(), (torch.tensor([[5, 6]]),), backend="torch").fallbacks == []
    one = dycl.compile(model, (x,), backend="torch")
    assert one.fallbacks == [] and torch.equal(one(x)[0], model(x)[0])
    with pytest.warns(dycl.FallbackWarning, match="other ones than the compile's"):
        got = one(x, a)
    assert torch.equal(got[0], model(x, a)[0])


class BatchDict(nn.Module):
    """A batch as one dict argument, as data loaders hand it over."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.fc = nn.Linear(8, 3)

    def forward(self, batch, return_dict=True):
        h = self.emb(batch["input_ids"])
        mask = batch.get("attention_mask")
        if mask is not None:
            h = h * mask.unsqueeze(-1)
        if "scale" in batch:
            h = h * batch["scale"]
        extra = {k: v.float().mean() for k, v in batch.items() if k.startswith("aux")}
        logits = self.fc(h)
        if logits.max() > 0.5:
            logits = logits * 2
        out = {"logits": logits, "n": len(batch), **extra}
        return out if return_dict else tuple(out.values())


def test_a_dict_argument_keeps_its_keys_and_values():
    """A dict of tensors (a data loader's batch) was refused: "argument 0 is a dict".
    Its keys are part of what was compiled (other keys: another program); a None
    value is a constant as a None argument is."""
    from collections import OrderedDict

    torch.manual_seed(0)
    model = BatchDict().eval()
    batch = {"input_ids": torch.randint(0, 10, (2, 5)), "attention_mask": torch.ones(2, 5), "aux_a": torch.ones(3)}
    cm = dycl.compile(model, [batch], backend="torch", fallback="error")
    calls = [batch, {**batch, "attention_mask": None}, {**batch, "attention_mask": torch.zeros(2, 5)},
             {**batch, "scale": torch.tensor(3.0)}, OrderedDict(batch),
             {"input_ids": torch.randint(0, 10, (2, 5)) * 0, "attention_mask": torch.ones(2, 5)}]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in calls:
            want, got = model(c), cm(c)
            assert list(got) == list(want) and all(torch.equal(got[k], want[k]) if torch.is_tensor(want[k])
                                                   else got[k] == want[k] for k in want), list(c)
        assert torch.equal(cm(batch, return_dict=False)[0], model(batch, return_dict=False)[0])
    assert cm.manifest["argument_spec"][0][0] == "dict"


class WritesIntoItsBatch(nn.Module):
    def forward(self, batch):
        batch["y"] = batch["x"] * 2
        return batch["y"].sum()


def test_a_dict_argument_forward_changes_is_the_callers():
    cm = dycl.compile(WritesIntoItsBatch(), [{"x": torch.ones(2)}])
    mine, theirs = {"x": torch.ones(2)}, {"x": torch.ones(2)}
    with pytest.warns(dycl.FallbackWarning, match="changes the list or dict argument"):
        assert torch.equal(cm(mine), WritesIntoItsBatch()(theirs))
    assert list(mine) == list(theirs) == ["x", "y"] and torch.equal(mine["y"], theirs["y"])


def test_a_dict_argument_keyed_by_other_than_constants_is_an_input_error():
    """A key that is a tuple or a tensor is no part of a spec: a clear InputError naming
    the argument, nothing compiled."""
    model = BatchDict().eval()
    for bad in ({("input_ids", 0): torch.zeros(2, 5, dtype=torch.long)}, {torch.tensor(1): torch.zeros(2)}):
        with pytest.raises(dycl.InputError, match=r"argument 0 is a dict with a key that is not a number, string"):
            dycl.compile(model, [bad], backend="torch")


class _KeyCache:
    """A cache object passed by the caller (HF's DynamicCache style)."""

    def __init__(self):
        self.keys = []


class TakesACacheObject(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, cache=None):
        if cache is not None:
            cache.keys.append(x)
            x = torch.cat(cache.keys, 0).mean(0, keepdim=True)
        return self.lin(x)


def test_an_object_argument_where_the_compile_had_none_runs_as_eager():
    """Compiled with `cache=None`, a call with a cache object raised InputError
    ("argument 1 is a _KeyCache; dycl takes tensors, ...") where eager answers."""
    torch.manual_seed(0)
    model = TakesACacheObject()
    x = torch.randn(1, 4)
    cm = dycl.compile(model, (x, None), backend="torch")
    mine, theirs = _KeyCache(), _KeyCache()
    with pytest.warns(dycl.FallbackWarning, match="argument 1 is a _KeyCache.*run the model as eager"):
        assert torch.equal(cm(x, mine), model(x, theirs))
    assert torch.equal(cm(x, mine), model(x, theirs))
    assert len(mine.keys) == len(theirs.keys) == 2
    assert torch.equal(cm(x), model(x))  # (without one: the compiled program)
