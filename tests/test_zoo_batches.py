"""The zoo compiled once with dynamic=True (the batch dimension symbolic) and
called at several batch sizes: equal to eager on every path; where the model's
own Python needs batch 1 (`if mask:` on a per-row mask), eager raises at larger
batches and the compiled model raises too, never returns values."""

import importlib

import pytest
import torch

import dycl
from dycl.demo import max_abs_error

pytestmark = pytest.mark.slow

BATCHES = (1, 2, 3, 8)


@pytest.mark.parametrize("name,backend", [("early_exit", "tvm"), ("shallow_deep", "tvm"), ("blockdrop", "onnxruntime"),
                                          ("branchy", "auto"), ("skipnet", "torch")])
def test_one_compile_for_every_batch(name, backend):
    mod = importlib.import_module(name)
    model = mod.make_model().eval()
    cm = dycl.compile(model, mod.example_inputs(), backend=backend, dynamic=True, fallback="error")
    assert cm.signature.dynamic and not cm._specializations
    with torch.no_grad():
        for path, x in mod.branch_inputs().items():
            for b in BATCHES:
                xs = [t.repeat(b, *[1] * (t.dim() - 1)) for t in x]
                try:
                    expected = model(*xs)
                except Exception:
                    with pytest.raises(Exception):
                        cm(*xs)
                    continue
                assert max_abs_error(expected, cm(*xs)) <= 1e-5 * max(1.0, float(torch.as_tensor(
                    expected[0] if isinstance(expected, tuple) else expected).abs().max())), (path, b)
    assert not cm._specializations  # every batch ran on the one dynamic compile


def test_the_captioner_compiled_once_for_every_image_size():
    """One compile for `1 x 3 x h x w` images, h = w in 16..64 (the encoder's adaptive
    pool makes every size one grid): every caption length equal to eager at sizes the
    compile never saw, nothing specialised."""
    import torch.nn.functional as F

    mod = importlib.import_module("captioner")
    model = mod.make_model().eval()
    cm = dycl.compile(model, mod.example_inputs(), backend="tvm", signature="1 x 3 x h x w x f32",
                      dims=["h=w=16..64"], fallback="error")
    with torch.no_grad():
        for path, (x,) in mod.branch_inputs().items():
            for size in (16, 24, 48, 64):
                image = F.interpolate(x, size=(size, size), mode="bilinear")
                assert max_abs_error(model(image), cm(image)) == 0, (path, size)
    assert not cm._specializations
