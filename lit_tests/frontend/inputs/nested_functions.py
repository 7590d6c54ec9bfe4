import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        scale = x.mean()

        def mix(u, k=2.0):
            return torch.tanh(self.fc(u) * k + scale)

        act = lambda v: torch.relu(v) - 0.5  # noqa: E731
        return act(mix(x)) + mix(x, 3.0)


def make():
    return Net()
