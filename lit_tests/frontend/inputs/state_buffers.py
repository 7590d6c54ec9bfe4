import torch
from torch import nn


class Normalizer(nn.Module):
    """Buffers forward updates (a call count, a running mean) and a pointer kept as an int."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("count", torch.zeros(()))
        self.register_buffer("mean", torch.zeros(4))
        self.register_buffer("hist", torch.zeros(3))
        self.ptr = 0

    def forward(self, x):
        h = self.fc(x)
        self.count += 1
        with torch.no_grad():
            self.mean.mul_(0.9).add_(h.mean(0), alpha=0.1)
        self.hist[self.ptr] = h.sum()
        self.ptr = (self.ptr + 1) % 3
        return h - self.mean


def make():
    return Normalizer()
