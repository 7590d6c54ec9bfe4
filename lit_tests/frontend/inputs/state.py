import torch
from torch import nn


class Stepper(nn.Module):
    """Recurrent state kept on the module, written by methods, read back in forward."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.steps = 0

    def init_state(self, x):
        self.h = torch.zeros_like(x)

    def step(self, x):
        self.h = torch.tanh(self.fc(x) + self.h)
        self.steps += 1

    def forward(self, x):
        self.init_state(x)
        self.steps = 0
        self.step(x)
        if self.h.sum() > 0:
            self.step(x)
        return self.h, self.steps


def make():
    return Stepper()
