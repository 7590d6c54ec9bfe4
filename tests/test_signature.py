"""The input-signature language (dycl/signature.py): shapes, dtypes and named
dimensions with ranges, one compiled model for every size, checked on each call."""

import copy
import re

import pytest
import torch
from torch import nn
import torch.nn.functional as F

import dycl
from dycl.signature import Signature, parse_ranges


@pytest.mark.parametrize("text, column", [
    ("b x ! x f32", 5),
    ("b x 3 x", 8),
    ("b 3 f32", 3),
    ("b x 8 x f32,, i64", 13),
    ("", 1),
])
def test_grammar_errors_point_at_the_column(text, column):
    with pytest.raises(dycl.UsageError, match=f"column {column}:") as e:
        Signature.parse(text)
    assert e.value.message.splitlines()[-1 if "each input" not in e.value.message else -2].index("^") == column + 1


def test_signature_text_round_trips_with_ranges():
    sig = Signature.parse("b x 3 x h x w x f32, b x i64", ["b=1..64", "h=w=32..512"])
    assert sig.ranges == {"b": (1, 64), "h": (32, 512), "w": (32, 512)}
    assert Signature.parse(sig.text()) == sig
    assert Signature.from_json(sig.to_json()) == sig
    assert Signature.parse("1x3x32x32xf32").inputs[0].dims == (1, 3, 32, 32)  # the compact form too


def test_bind_names_the_violated_constraint():
    sig = Signature.parse("b x 8 x f32, b x i64", ["b=1..64"])
    assert sig.bind([torch.zeros(4, 8), torch.zeros(4, dtype=torch.long)]) == {"b": 4}
    with pytest.raises(dycl.InputError, match=r"b = 80, which is outside 1\.\.64"):
        sig.bind([torch.zeros(80, 8), torch.zeros(80, dtype=torch.long)])
    with pytest.raises(dycl.InputError, match="every b has one size"):
        sig.bind([torch.zeros(4, 8), torch.zeros(5, dtype=torch.long)])
    with pytest.raises(dycl.InputError, match="dimension 1 must be 8"):
        sig.bind([torch.zeros(4, 9), torch.zeros(4, dtype=torch.long)])


@pytest.mark.parametrize("bad, message", [("b=5..1", "is empty"), ("b=x", "column 3"), ("b", "column 2")])
def test_bad_dim_ranges(bad, message):
    with pytest.raises(dycl.UsageError, match=message):
        parse_ranges([bad])


class Gate(nn.Module):
    """A host branch per call on a batch statistic; a size read on the host."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x, ids):
        h = torch.relu(self.a(x))
        if h.mean() > 0.3:
            h = self.b(h) * 2
        return h + ids.unsqueeze(-1) * (x.shape[0] > 2)


def test_one_compiled_model_for_every_declared_size(tmp_path):
    torch.manual_seed(0)
    model = Gate().eval()
    ex = [torch.randn(2, 8), torch.ones(2, dtype=torch.long)]
    cm = dycl.compile(copy.deepcopy(model), ex, backend="torch", signature="b x 8 x f32, b x i64", dims=["b=1..16"],
                      out_dir=tmp_path / "art", fallback="error")
    # Built for any b, the dimension named in the sub-DNN's types.
    assert any(s["inputs"][0] == 'tensor<?x8xf32, ["b", ""]>' for s in cm.subgraphs.values()), cm.subgraphs
    loaded = dycl.load(tmp_path / "art")
    with torch.no_grad():
        for b in (1, 2, 3, 7, 16):
            for scale in (0.1, 3.0):
                x, ids = torch.randn(b, 8) * scale, torch.arange(b)
                want = model(x, ids)
                assert torch.allclose(cm(x, ids), want, atol=1e-6), b
                assert torch.allclose(loaded(x, ids), want, atol=1e-6), b
    with pytest.raises(dycl.InputError, match=r"b = 17, which is outside 1\.\.16"):
        loaded(torch.randn(17, 8), torch.arange(17))
    assert loaded.manifest["signature"] == {"inputs": [{"dims": ["b", 8], "dtype": "float32"},
                                                       {"dims": ["b"], "dtype": "int64"}], "ranges": {"b": [1, 16]}}


def test_dynamic_true_makes_the_first_dimension_the_batch():
    torch.manual_seed(0)
    model = Gate().eval()
    cm = dycl.compile(model, [torch.randn(1, 8), torch.ones(1, dtype=torch.long)], backend="torch", dynamic=True)
    assert cm.signature.text() == "b x 8 x f32, b x i64"
    with torch.no_grad():
        x, ids = torch.randn(5, 8), torch.arange(5)
        assert torch.allclose(cm(x, ids), model(x, ids), atol=1e-6)
    assert not cm._specializations


class BatchOne(nn.Module):
    def forward(self, x):
        return torch.stack(x.unbind(0)).sum(0)  # as many tensors as rows: the batch size is needed


def test_code_that_needs_a_declared_dimension_says_where():
    with pytest.raises(dycl.DyclError, match=r"test_signature.py:\d+:\d+: error: the input dimensions declared "
                                             r"symbolic \(b\) cannot stay symbolic here"):
        dycl.compile(BatchOne(), [torch.randn(1, 8)], backend="torch", signature="b x 8 x f32", dims=["b=1..8"])


def test_dynamic_true_specialises_where_the_batch_size_is_needed():
    """dynamic=True is asked for; where the code needs the batch size's value, a
    warning says where, and each size compiles on first use (no refusal)."""
    model = BatchOne()
    with pytest.warns(dycl.FallbackWarning, match=r"test_signature.py:\d+:\d+: .*cannot stay symbolic.*dynamic='auto'"):
        cm = dycl.compile(model, [torch.randn(1, 8)], backend="torch", dynamic=True)
    for b in (1, 3, 4):
        x = torch.randn(b, 8)
        assert torch.allclose(cm(x), model(x))


def test_signature_usage_errors():
    with pytest.raises(dycl.UsageError, match="do not fit the signature"):
        dycl.compile(Gate().eval(), [torch.randn(2, 8), torch.ones(3, dtype=torch.long)], signature="b x 8 x f32, b x i64")
    with pytest.raises(dycl.UsageError, match="dynamic=False asks for the example shapes only"):
        dycl.compile(Gate().eval(), [torch.randn(2, 8), torch.ones(2, dtype=torch.long)],
                     signature="b x 8 x f32, b x i64", dynamic=False)


class Pool(nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            x = F.max_pool2d(x, 2)  # h and w are halved on one path only
        return x.sum((2, 3)) * 2


def test_named_dimensions_that_differ_between_paths_and_anonymous_ones():
    torch.manual_seed(0)
    cm = dycl.compile(Pool(), [torch.randn(2, 3, 8, 8)], backend="torch", signature="b x 3 x h x w x f32",
                      fallback="error")
    assert cm.subgraphs and not cm.fallbacks
    for b, h, w in [(1, 4, 4), (3, 8, 10), (2, 9, 7)]:
        for shift in (2.0, -2.0):
            x = torch.randn(b, 3, h, w) + shift
            assert torch.allclose(cm(x), Pool()(x), atol=1e-5), (b, h, w)
    anonymous = dycl.compile(Pool(), [torch.randn(2, 3, 8, 8)], backend="torch", signature="? x 3 x 8 x 8 x f32",
                             fallback="error")
    x = torch.randn(5, 3, 8, 8) + 2
    assert torch.allclose(anonymous(x), Pool()(x), atol=1e-5)


@pytest.mark.parametrize("text, dims, message", [
    ("b x 16 x f32", ["b=1..64", "b=2..8"], "'b' already has a range (1..64)"),
    ("b x 16 x f32; b=1..64", ["b=2..8"], "'b' has a range in the input signature (1..64) and in --dim/dims (2..8)"),
    ("b x 16 x f32; b=1..64; b=3..4", [], "gives 'b' two ranges (1..64 and 3..4)"),
])
def test_a_dimension_given_two_ranges_is_an_error(text, dims, message):
    """The last range silently won (a call inside the first one then failed)."""
    with pytest.raises(dycl.UsageError, match=re.escape(message)):
        Signature.parse(text, dims)
