"""Data-dependent shapes inside tensor code (sparse MoE dispatch, boolean masks):
each compiled backend builds sub-DNNs whose inputs have a dynamic dimension, and
the compiled model equals eager on inputs that select different numbers of rows."""

import copy
import logging
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import dycl
from dycl.demo import max_abs_error
from models.fallbacks import CASES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("backend", ["onnxruntime", "tvm", "auto"])
@pytest.mark.parametrize("name", ["sparse_moe_block", "masked_experts", "selected_rows", "switch_experts",
                                  "expert_hit_moe_block"])
def test_dynamic_rows_on_every_backend(name, backend, tmp_path):
    model, inputs, cm = _compile_case(name, backend, tmp_path / "art")
    with torch.no_grad():
        for args in inputs:
            assert max_abs_error(model(*args), cm(*args)) <= 1e-5, args


def _compile_case(name, backend, out):
    """The case's model (seeded), its inputs and its compiled model, saved in `out`."""
    factory, inputs, _, _ = CASES[name]
    torch.manual_seed(0)
    model = factory().eval()
    cm = dycl.compile(copy.deepcopy(model), [x.clone() for x in inputs[0]], backend=backend, fallback="error",
                      out_dir=out)
    return model, inputs, cm


def test_dynamic_inputs_are_declared_in_the_manifest(tmp_path):
    manifest = _compile_case("selected_rows", "onnxruntime", tmp_path / "art")[2].manifest
    # Built for any number of rows by ONNX Runtime itself (dynamic axes), not by a fallback.
    dynamic = [s for s in manifest["subgraphs"].values()
               if any("?" in t for t in s["inputs"]) and all(t.startswith("tensor") for t in s["outputs"])]
    assert dynamic and all(s["backend"] == "onnxruntime" for s in dynamic), manifest["subgraphs"]


def test_tvm_gets_sub_dnns_cut_at_data_dependent_sizes(tmp_path):
    """TVM cannot build `x[mask]`: the host runs it with torch and TVM builds the
    sub-DNNs before and after it, the later ones for any number of rows; the saved
    artifact reloads without the model and still equals eager."""
    model, inputs, compiled = _compile_case("selected_rows", "tvm", tmp_path / "art")
    manifest = compiled.manifest
    subs = manifest["subgraphs"].values()
    assert any(s["backend"] == "tvm" and "?" in s["inputs"][0] for s in subs), manifest["subgraphs"]
    assert all(s["backend"] == "tvm" for s in subs if s["inputs"] == ["tensor<6x8xf32>"]), manifest["subgraphs"]
    assert "_operator.getitem(_t(h), _t(" in (tmp_path / "art" / "host.py").read_text()
    cm = dycl.load(tmp_path / "art")
    with torch.no_grad():
        for args in inputs:
            assert max_abs_error(model(*args), cm(*args)) <= 1e-5, args


def test_backends_that_build_data_dependent_sizes_get_whole_sub_dnns(tmp_path):
    manifest = _compile_case("sparse_moe_block", "inductor", tmp_path / "art")[2].manifest
    assert [s["backend"] for s in manifest["subgraphs"].values()] == ["inductor"], manifest["subgraphs"]


class RepeatedAndNegativeIndices(torch.nn.Module):
    """index_add_ with repeated indices and advanced indexing with negative ones, both
    data-dependent: torch.onnx's own graphs are wrong on such inputs (it warns so).
    ONNX Runtime builds them now: index_add is exported as a scatter_add, and the
    indices check-index-bounds wrapped into range are never negative."""

    def forward(self, x, sel):
        out = torch.zeros(4, 8)
        idx = torch.where(sel > 0)[0] % 2
        out.index_add_(0, idx, x[idx])
        i = (sel > 0).long() - 1
        j = (sel > 0.5).long() * 3 - 2
        return out, x[i, j] * 2


def test_onnx_graphs_torch_onnx_warns_about_are_built_right():
    model, x = RepeatedAndNegativeIndices(), torch.randn(4, 8)
    sels = [torch.tensor(v) for v in ([1., 0.7, -1., 0.], [1., 1., -1., 1.], [0., 1., 0., 1.], [1., 1., 1., 1.])]
    cm = dycl.compile(model, [x, sels[0]], backend="onnxruntime", fallback="error")
    assert not cm.report.fallbacks and {s["backend"] for s in cm.manifest["subgraphs"].values()} == {"onnxruntime"}
    for s in sels:
        assert max_abs_error(model(x, s), cm(x, s)) == 0.0, s


class HalvesBySize(torch.nn.Module):
    def forward(self, x):
        h = x.size(1) // 2
        y = x[:, :h] * x[:, h:2 * h]
        if y.sum() > 0:
            return y * 2
        return y


def test_a_size_read_as_a_number_with_symbolic_dims_compiles():
    """`h = x.size(1) // 2; x[:, :h]` under a signature: `auto` timed each backend on
    example inputs that did not fit together (the number was not resized with the
    tensor), the run raised and forward ran as Python."""
    cm = dycl.compile(HalvesBySize(), [torch.randn(2, 6)], fallback="error", signature="b x s x f32",
                      dims=["b=1..64", "s=2..64"])
    for shape in ((3, 7), (5, 10), (1, 2)):
        x = torch.randn(shape)
        assert torch.allclose(cm(x), HalvesBySize()(x)), shape


class LastTokenAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(10, 8)
        self.head = torch.nn.Linear(8, 10)

    def forward(self, ids):
        t = ids.shape[1]
        h = self.emb(ids)
        mask = torch.full((t, t), torch.finfo(h.dtype).min).triu(1)
        att = (h @ h.transpose(-1, -2) + mask).softmax(-1)
        return self.head(att @ h)[:, -1].argmax(-1)


def test_a_size_in_the_range_the_build_does_not_hold_for(tmp_path):
    """torch.export decides something at a length of 1: the build holds for t != 1
    only, inside the declared t=1..16. A call at t = 1 raised from inside the program;
    now the compiled model compiles that size on first use, and a loaded artifact
    refuses it before running anything, naming the rule."""
    model = LastTokenAttention()
    with pytest.warns(dycl.FallbackWarning, match="t != 1"):
        cm = dycl.compile(model, [torch.randint(0, 10, (2, 5))], backend="torch", signature="b x t x i64",
                          dims=["b=1..8", "t=1..16"])
    cm.save(tmp_path / "art")
    loaded = dycl.load(tmp_path / "art")
    for b, t in [(2, 5), (3, 7), (1, 4), (2, 1), (1, 1)]:
        x = torch.randint(0, 10, (b, t))
        assert torch.equal(cm(x), model(x)), (b, t)
        if t == 1:
            with pytest.raises(dycl.InputError, match=r"sub-DNN sub_\d+ was built for sizes where t != 1, and these "
                                                      r"inputs have b = \d, t = 1"):
                loaded(x)
        else:
            assert torch.equal(loaded(x), model(x)), (b, t)


class SqueezeKept(torch.nn.Module):
    """Detection-style: the boxes a score threshold kept, one box made 1-d."""

    def forward(self, boxes, scores):
        y = boxes[scores > 0.5].squeeze(0)
        if y.dim() == 1:
            return y.unsqueeze(0) * 10, y.dim()
        return y, y.dim()


class SqueezeAll(torch.nn.Module):
    def forward(self, x):
        y = x.squeeze()
        if y.dim() == 0:
            y = y.unsqueeze(0) - 1
        return y * 2, y.dim()


@pytest.mark.parametrize("backend", ["onnxruntime", "tvm"])
def test_a_run_time_size_of_one_takes_its_own_path(backend):
    """`x[mask].squeeze(0)` is typed `?x4` (torch's symbolic sizes assume a size
    symbol is not 1), so `y.dim()` folded to 2 and a mask keeping one box took the
    other branch: wrong values, shape and dim, silently (probe N). The path now
    splits on `size == 1`; the same for a signature's `n` and dynamic=True."""
    torch.manual_seed(0)
    boxes = torch.randn(8, 4)
    model = SqueezeKept()
    cm = dycl.compile(model, [boxes, torch.tensor([.9, .9, .9, 0, 0, 0, 0, 0])], backend=backend)
    for kept in ([2], [0, 5], [], [1, 2, 3, 4, 5, 6, 7, 0]):
        scores = torch.zeros(8)
        scores[kept] = 0.9
        want, got = model(boxes, scores), cm(boxes, scores)
        assert got[1] == want[1] and torch.equal(got[0], want[0]), kept
    model = SqueezeAll()
    for how in (dict(signature="n x 1 x f32", dims=["n=1..64"]), dict(dynamic=True)):
        cm = dycl.compile(model, [torch.randn(5, 1)], backend=backend, **how)
        for n in (5, 1, 3, 1):
            x = torch.randn(n, 1)
            want, got = model(x), cm(x)
            assert got[1] == want[1] and got[0].shape == want[0].shape and torch.equal(got[0], want[0]), (how, n)


class ItemOfKept(torch.nn.Module):
    def forward(self, x, y):
        sel = y[x > 0.5]
        if sel.numel() == 1:
            return sel.item() + 1.0
        return sel.sum().item()


class GrowToNine(torch.nn.Module):
    def forward(self, ids):
        gen = ids
        while gen.shape[1] < 9:
            gen = torch.cat([gen, gen.sum(-1, keepdim=True) % 7], -1)
        return gen


def test_item_of_a_selection_and_a_loop_growing_a_named_dim():
    """`.item()` of a `?`-sized selection failed shape inference (a guard on the data-
    dependent size) and all of forward ran as Python; a loop growing the signature's
    `t` was a verifier error (carried `t`, yielded `t + 1`), all of forward as Python
    too (probe O). Both compile now; item() of several elements raises eager's error."""
    model = ItemOfKept()
    cm = dycl.compile(model, [torch.tensor([0.9, 0.1, 0.1]), torch.tensor([3., 4, 5])], backend="onnxruntime",
                      fallback="error")
    for x in ([0.9, 0.1, 0.1], [0.9, 0.9, 0.1], [0.1, 0.1, 0.1]):
        x = torch.tensor(x)
        assert cm(x, torch.tensor([3., 4, 5])) == model(x, torch.tensor([3., 4, 5]))
    model = GrowToNine()
    cm = dycl.compile(model, [torch.zeros(2, 3, dtype=torch.long)], backend="onnxruntime", signature="b x t x i64",
                      dims=["b=1..8", "t=1..16"], fallback="error")
    for b, t in ((2, 4), (1, 1), (3, 9), (2, 12)):
        x = torch.randint(0, 5, (b, t))
        assert torch.equal(cm(x), model(x)), (b, t)


class ItemOfMany(torch.nn.Module):
    def forward(self, x, y):
        return y[x > 0.5].item()


def test_item_of_several_elements_raises_eagers_error():
    model = ItemOfMany()
    cm = dycl.compile(model, [torch.tensor([0.9, 0.1]), torch.tensor([3., 4])], backend="torch")
    x = torch.tensor([0.9, 0.9])
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        model(x, torch.tensor([3., 4]))
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        cm(x, torch.tensor([3., 4]))


class EmptyBatchTokens(torch.nn.Module):
    def forward(self, x):
        toks = []
        for _ in range(2):
            tok = x.argmax(-1)
            toks.append(tok)
            x = x + torch.nn.functional.one_hot(tok, 6).float()
            if (tok == 5).all():
                break
        return torch.stack(toks, 1)


def test_an_empty_tensor_passed_between_backends():
    """A 0-row tensor from ONNX Runtime (stride 0) handed to a TVM sub-DNN: TVM refused
    it ("expected to be compact array", probe O); the loader retries with canonical
    strides."""
    model = EmptyBatchTokens()
    x = torch.zeros(0, 6)
    cm = dycl.compile(model, [x], backend="tvm")
    assert torch.equal(cm(x), model(x))


def test_tvm_takes_a_sub_dnn_that_returns_a_size():
    """`return out, out.size(1)` after a growing loop: the sub-DNN returns the size as
    an int, which TVM's loader took for a tensor ('int' object has no attribute
    'data_ptr'); the sub-DNN went down the chain to Inductor. TVM builds it now."""
    from models.constructs import GrowingTensorWhile

    model = GrowingTensorWhile()
    cm = dycl.compile(model, [torch.full((1, 4), 1.0)], backend="tvm", fallback="error")
    assert not cm.report.fallbacks, cm.report.fallbacks
    for v in (1.0, -3.0, -0.1):
        x = torch.full((1, 4), v)
        want, got = model(x), cm(x)
        assert torch.equal(got[0], want[0]) and got[1] == want[1] and type(got[1]) is int


class PerSampleExit(nn.Module):
    """Each sample leaves at the first confident head; the rest go on (a shrinking
    active set, whose size can be 1)."""

    def __init__(self, depth=3, width=8):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.heads = nn.ModuleList([nn.Linear(width, 3) for _ in range(depth)])

    def forward(self, x):
        out = torch.zeros(x.shape[0], 3)
        exited = torch.full((x.shape[0],), -1, dtype=torch.long)
        active, h = torch.arange(x.shape[0]), x
        for i in range(len(self.layers)):
            h = torch.relu(self.layers[i](h))
            logits = self.heads[i](h)
            conf = F.softmax(logits, -1).max(-1).values
            done = conf > 0.6 if i < len(self.layers) - 1 else torch.ones_like(conf, dtype=torch.bool)
            out[active[done]] = logits[done]
            exited[active[done]] = i
            active, h = active[~done], h[~done]
            if active.numel() == 0:
                break
        return out, exited


def test_a_size_a_build_excludes_runs_the_sub_dnns_torch_graph():
    """A size-oblivious export guards a data-dependent size `!= 1`: with dynamic=True,
    every call with one sample raised 'was built for input sizes where ...' (found by
    a probe). A model compiled here runs that sub-DNN's torch graph at such sizes."""
    torch.manual_seed(1)
    model = PerSampleExit().eval()
    cm = dycl.compile(model, (torch.randn(4, 8),), backend="torch", dynamic=True)
    with torch.no_grad():
        for b in (1, 4, 1, 7):
            x = torch.randn(b, 8)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", dycl.FallbackWarning)
                got = cm(x)
            for g, w in zip(got, model(x)):
                assert torch.equal(g, w)


class SplitMergeHeads(torch.nn.Module):
    """transformers' `_split_heads` / `_merge_heads`: `t.view(t.size()[:-1] + (h, d))`
    with a dynamic batch. The new shape was a Python object computed on the host,
    which no sub-DNN takes, so both statements ran as Python (found by a probe of
    HF-style decoders); it is traced inside the sub-DNN now, sizes symbolic."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        t = self.proj(x)
        heads = t.view(t.size()[:-1] + (2, 4)).permute(0, 2, 1, 3)
        merged = heads.permute(0, 2, 1, 3).contiguous()
        return merged.view(merged.size()[:-2] + (8,)) * 2, heads.shape[0]


@pytest.mark.parametrize("backend", ["torch", "onnxruntime", "tvm"])
def test_size_arithmetic_feeding_a_view_stays_in_the_sub_dnn(backend):
    torch.manual_seed(0)
    model = SplitMergeHeads().eval()
    cm = dycl.compile(model, [torch.randn(3, 5, 8)], backend=backend, dynamic=True, fallback="error")
    for b in (1, 2, 7):
        x = torch.randn(b, 5, 8)
        want, got = model(x), cm(x)
        assert torch.allclose(got[0], want[0], atol=1e-6) and got[1] == want[1] and type(got[1]) is int, b


class ClampToImage(nn.Module):
    def forward(self, boxes, img_size: int = 8):
        return boxes.clamp(min=0, max=img_size)


def test_dynamic_model_takes_forwards_other_arguments():
    # (with dynamic=True, `cm(b, 8)` was refused: "expected 1 inputs")
    model, boxes = ClampToImage(), torch.randn(5, 4) * 10
    cm = dycl.compile(model, [boxes], backend="torch", dynamic=True)
    for args in [(boxes,), (boxes, 8), (boxes[:3], 8), (boxes, 4)]:
        assert torch.equal(cm(*args), model(*args))
    assert torch.equal(cm(boxes, img_size=4), model(boxes, img_size=4))


class TopThreeOfTheSelected(nn.Module):
    def forward(self, x):
        return x[x > 0].topk(3).values


def test_shape_inference_logs_no_traceback(caplog):
    # (torch logged each op that raised on fake tensors with its traceback: a raw
    # traceback on stderr during a compile that went on fine)
    model, x = TopThreeOfTheSelected(), torch.tensor([1.0, 2.0, 3.0, -1.0])
    with caplog.at_level(logging.ERROR):
        cm = dycl.compile(model, [x], backend="torch")
    assert torch.equal(cm(x), model(x))
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
