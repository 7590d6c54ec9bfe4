import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        if x.argmax().item() not in (2, 3):
            return x * 2
        return x


def make():
    return Net()
