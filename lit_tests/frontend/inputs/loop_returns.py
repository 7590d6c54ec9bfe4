import torch
from torch import nn


class Model(nn.Module):
    def first_positive(self, x):
        n = int((x.abs().sum(1) >= 0).sum())  # (the rows, counted at run time: a run-time range)
        for j in range(n):
            if x[j].sum() > 0:
                return x[j] * 2
        return x[0] * 0

    def forward(self, x):
        return self.first_positive(x) + 1


def make():
    return Model()
