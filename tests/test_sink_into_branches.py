"""sink-into-branches end to end: the tensor work after a join runs in the
branch's own sub-DNN (one call per path fewer), and every path still equals eager."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import dycl


class GatedHead(nn.Module):
    """A gate picks one of two blocks; the gate's probability scales the result
    and a head follows the join (the router's shape, as people write it)."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 2)
        self.blocks = nn.ModuleList([nn.Linear(8, 8), nn.Sequential(nn.Linear(8, 8), nn.GELU())])
        self.head = nn.Linear(8, 3)
        self.last = -1

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)
        k = int(probs.argmax())
        p = probs[0, k]
        if k == 0:
            self.last = 0
            y = self.blocks[0](x)
        else:
            self.last = 1
            y = self.blocks[1](x)
        return self.head(x + p * y)


def _inputs(model):
    found = {}
    gen = torch.Generator().manual_seed(0)
    for _ in range(200):
        x = torch.randn(1, 8, generator=gen) * 3
        with torch.no_grad():
            found.setdefault(int(F.softmax(model.gate(x), -1).argmax()), x)
    assert len(found) == 2
    return list(found.values())


@pytest.mark.parametrize("backend", ["tvm", "onnxruntime"])
def test_each_path_is_one_call_after_the_predicate(backend, tmp_path):
    torch.manual_seed(0)
    model = GatedHead().eval()
    reference = GatedHead().eval()
    reference.load_state_dict(model.state_dict())
    xs = _inputs(model)
    cm = dycl.compile(model, (xs[0],), backend=backend, out_dir=tmp_path / "a", fallback="error")
    host = (tmp_path / "a" / "host.py").read_text()
    # the gate's sub-DNN, then one per branch: p = probs[0, k] and the head are in both
    assert set(cm.subgraphs) == {"sub_0", "sub_1", "sub_2"}, host
    for x in [*xs, torch.full((1, 8), float("nan")), torch.full((1, 8), float("inf"))]:
        with torch.no_grad():
            want = reference(x)
        got = cm(x)
        assert torch.equal(want.isnan(), got.isnan())
        assert torch.allclose(want.nan_to_num(), got.nan_to_num(), rtol=1e-5, atol=1e-6)
        assert model.last == reference.last
