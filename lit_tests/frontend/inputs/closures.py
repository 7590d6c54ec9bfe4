import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})

    def forward(self, x):
        scale = 2.0
        act = lambda t: torch.relu(t) * scale  # noqa: E731
        with torch.no_grad():
            outs = {k: act(h(x)) for k, h in self.heads.items()}
        return sum(outs.values())


def make():
    torch.manual_seed(0)
    return Model().eval()
