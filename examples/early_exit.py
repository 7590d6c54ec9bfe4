"""A Shallow-Deep-style network: internal classifiers may end inference early."""

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(F.relu(self.fc(x))) + x


class EarlyExit(nn.Module):
    def __init__(self, width: int = 16, depth: int = 4, classes: int = 5, threshold: float = 0.5):
        super().__init__()
        self.stem = nn.Linear(width, width)
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])
        self.has_ic = [i % 2 == 0 for i in range(depth)]
        self.ics = nn.ModuleList([nn.Linear(width, classes) for _ in range(depth)])
        self.head = nn.Linear(width, classes)
        self.threshold = threshold
        self.smoothing = 2

    def forward(self, x):
        fwd = self.stem(x)
        for _ in range(self.smoothing):
            fwd = torch.tanh(fwd) * 0.5 + fwd * 0.5
        for i in range(len(self.blocks)):
            fwd = self.blocks[i](fwd)
            if self.has_ic[i]:
                out = self.ics[i](fwd)
                if F.softmax(out[0], dim=0).max() >= self.threshold:
                    return out
        return self.head(fwd)


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return EarlyExit().eval()


def example_inputs():
    return (torch.randn(1, 16),)


def _exit_of(model, x) -> str:
    with torch.no_grad():
        fwd = model.stem(x)
        for _ in range(model.smoothing):
            fwd = torch.tanh(fwd) * 0.5 + fwd * 0.5
        for i, blk in enumerate(model.blocks):
            fwd = blk(fwd)
            if model.has_ic[i] and F.softmax(model.ics[i](fwd)[0], dim=0).max() >= model.threshold:
                return f"exit{i}"
    return "head"


def branch_inputs():
    """Inputs reaching each internal classifier's exit and the final head."""
    model = make_model()
    gen = torch.Generator().manual_seed(3)
    found = {}
    for _ in range(5000):
        x = torch.randn(1, 16, generator=gen) * float(torch.rand(1, generator=gen) * 6)
        found.setdefault(_exit_of(model, x), (x,))
        if len(found) == 3:
            break
    return found
