"""Fallback regions whose result size follows data no compile-time stand-in shows:
rows whose magnitude passes 50 (stand-ins are a few units at most) add to the rows
each expert keeps. `zip(..., strict=True)` over chunks of a tensor and a ModuleList
runs as Python (a plain zip of them is compiled), and the code after it is compiled
for the compile's sizes. What the regions do to the module differs per class."""

import random

import torch
from torch import nn


class _Experts(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.head = nn.Linear(4, 3)

    def dispatch(self, x):
        outs = []
        for chunk, expert in zip(x.chunk(2), self.experts, strict=True):
            keep = 1 + int((chunk.abs() > 50).sum())
            outs.append(expert(chunk)[:keep])
        return outs

    def finish(self, outs):
        y = torch.cat(outs)
        return self.head(y).softmax(-1) * 2


class DataSizedExperts(_Experts):
    """Changes nothing the caller sees."""

    def forward(self, x):
        return self.finish(self.dispatch(x))


class DataSizedExpertsCounting(_Experts):
    """Also counts its calls and logs each call's row count in module attributes
    (what saving them at the call's start undoes)."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.rows = []
        self.last = None

    def forward(self, x):
        outs = []
        for chunk, expert in zip(x.chunk(2), self.experts, strict=True):
            keep = 1 + int((chunk.abs() > 50).sum())
            outs.append(expert(chunk)[:keep])
        self.calls += 1
        self.rows.append(sum(o.shape[0] for o in outs))
        self.last = outs[0].shape[0]
        if x.abs().max() > 1000:  # (never on the compile's stand-ins)
            self.calls += 10
        return self.finish(outs), self.calls


class DataSizedExpertsPrinting(_Experts):
    """Also prints the rows each expert keeps: running the call again would print
    them twice, so a call whose sizes differ from the compile's stays an error."""

    def forward(self, x):
        outs = []
        for chunk, expert in zip(x.chunk(2), self.experts, strict=True):
            keep = 1 + int((chunk.abs() > 50).sum())
            print("rows kept:", keep)
            outs.append(expert(chunk)[:keep])
        return self.finish(outs)


EVENTS = []


def _note(k):
    EVENTS.append(k)


class RarePathHelpers(nn.Module):
    """Python whose rare path (no compile-time stand-in reaches `>= 50`) keeps all
    rows and counts through a method on the module: saved and put back, the call runs
    again as eager."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l = nn.Linear(4, 4)
        self.n = 0

    def on_rare_path(self):
        self.n += 1

    def forward(self, x):
        try:
            if int(x[0, 0]) >= 50:
                self.on_rare_path()
                y = x
            else:
                y = x[:2]
        except ValueError:
            y = x[:1]
        return self.l(y)


class RarePathGlobalLog(RarePathHelpers):
    """The same, through a module-level function appending to a global list: that
    cannot be put back, so the mismatch is an error, never a second append."""

    def on_rare_path(self):
        _note(1)


class DataSizedExpertsNoisy(_Experts):
    """Also draws random numbers in the region (torch's and Python's generators):
    their states are saved at the call's start and put back, so the call run again
    draws what eager draws."""

    def forward(self, x):
        outs = []
        for chunk, expert in zip(x.chunk(2), self.experts, strict=True):
            keep = 1 + int((chunk.abs() > 50).sum())
            noise = torch.rand(1) * random.random()
            outs.append(expert(chunk)[:keep] + noise)
        return self.finish(outs)
