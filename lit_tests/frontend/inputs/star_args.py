import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, /, *rest, **options):
        h = self.fc(x)
        for r in rest:
            h = h + r
        return h * options.get("scale", 2.0), len(rest)


def make():
    return Net()
