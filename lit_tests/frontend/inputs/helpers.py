import torch
from torch import nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, scale=1.0):
        return F.relu(self.fc(x)) * scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = Block()
        self.steps = 0

    def _head(self, x, k):
        return x.sum(-1) * k, k + 1

    def _count(self, x):
        self.steps += 1
        return x * 2

    def forward(self, x):
        x = self.a(x)
        if x.mean() > 0:
            x = self.b(x, scale=0.5)
        y, n = self._head(x, 2)
        z, m = self._head(x, 3)
        return self._count(y) + z + n + m


def make():
    return Net()
