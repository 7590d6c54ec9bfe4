import torch
from torch import nn


class Model(nn.Module):
    def first_positive(self, x):
        for j in range(x.size(0)):
            if x[j].sum() > 0:
                return x[j] * 2
        return x[0] * 0

    def forward(self, x):
        return self.first_positive(x) + 1


def make():
    return Model()
