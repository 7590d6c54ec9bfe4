import torch
from torch import nn


class Rows(nn.Module):
    def forward(self, x):
        acc = x[0] * 0
        for c in torch.relu(x).unique():
            acc = acc + c
        return acc


def make():
    return Rows()
