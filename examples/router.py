"""A top-1 mixture-of-experts layer (Switch-Transformer style routing, batch 1): a
gating network scores three experts, the best one alone runs, and its output is
scaled by the gate's probability."""

import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int, depth: int = 1, dropout: float = 0.1):
        super().__init__()
        layers = []
        for i in range(depth):
            layers += [nn.Linear(dim if i == 0 else hidden, hidden), nn.GELU(), nn.Dropout(dropout)]
        self.net = nn.Sequential(*layers)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.out(self.net(x))


class Router(nn.Module):
    def __init__(self, dim: int = 32, num_experts: int = 3, num_classes: int = 5):
        super().__init__()
        self.num_experts = num_experts
        self.embed = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.gate = nn.Linear(dim, num_experts, bias=False)
        # experts of different capacity: the path taken changes the cost
        self.experts = nn.ModuleList([FeedForward(dim, 2 * dim, depth=d) for d in (1, 2, 3)])
        self.head = nn.Linear(dim, num_classes)

    def route(self, h):
        probs = F.softmax(self.gate(h), dim=-1)
        idx = int(probs.argmax())
        return idx, probs[0, idx]

    def forward(self, x):
        h = F.gelu(self.embed(x))
        z = self.norm(h)
        idx, p = self.route(z)
        if idx == 0:
            y = self.experts[0](z)
        elif idx == 1:
            y = self.experts[1](z)
        else:
            y = self.experts[2](z)
        h = h + p * y
        return self.head(h)


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return Router().eval()


def example_inputs():
    return (torch.randn(1, 32),)


def chosen_expert(model: Router, x: torch.Tensor) -> str:
    """The expert the gate picks for ``x``, recomputed in plain PyTorch."""
    with torch.no_grad():
        z = model.norm(F.gelu(model.embed(x)))
        return f"expert{int(torch.argmax(z @ model.gate.weight.T))}"


def branch_inputs():
    """One input routed to each expert."""
    model = make_model()
    gen = torch.Generator().manual_seed(4)
    found = {}
    for _ in range(1000):
        x = torch.randn(1, 32, generator=gen) * float(torch.empty(1).uniform_(-1.0, 2.0, generator=gen).exp())
        found.setdefault(chosen_expert(model, x), (x,))
        if len(found) == model.num_experts:
            break
    return found
