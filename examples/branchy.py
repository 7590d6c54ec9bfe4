"""The smallest dynamic network: the path taken depends on the input's values."""

import torch
from torch import nn


class Branchy(nn.Module):
    def __init__(self, width: int = 16):
        super().__init__()
        self.pre = nn.Linear(width, width)
        self.a = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        self.b = nn.Linear(width, width)

    def forward(self, x):
        h = self.pre(x)
        if h.mean() > 0:
            return self.a(h)
        y = self.b(h)
        return torch.relu(y)


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return Branchy().eval()


def example_inputs() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 16),)


def branch_inputs() -> dict[str, tuple[torch.Tensor, ...]]:
    """Inputs that drive each path (checked against eager in the tests)."""
    model = make_model()
    found: dict[str, tuple[torch.Tensor, ...]] = {}
    gen = torch.Generator().manual_seed(1)
    while len(found) < 2:
        x = torch.randn(1, 16, generator=gen) * 3
        with torch.no_grad():
            taken = "a" if model.pre(x).mean() > 0 else "b"
        found.setdefault(taken, (x,))
    return found
