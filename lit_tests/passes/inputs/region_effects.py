import torch
from torch import nn


class Regions(nn.Module):
    """Three fallback regions (`zip(..., strict=True)` runs as Python): one changes
    nothing, one logs to a module list, one prints."""

    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.log = []

    def forward(self, x):
        a = []
        for chunk, expert in zip(x.chunk(2), self.experts, strict=True):
            a.append(expert(chunk))
        for chunk, expert in zip(x.chunk(2), self.experts, strict=True):
            self.log.append(chunk.shape[0])
        for chunk, expert in zip(x.chunk(2), self.experts, strict=True):
            print(chunk.shape)
        return a[0] + a[1]


def make():
    return Regions()
