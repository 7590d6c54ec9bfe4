import torch
from torch import nn


class GradModes(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @torch.no_grad()
    def features(self, x):
        return self.fc(x)

    def forward(self, x):
        with torch.inference_mode():
            with torch.no_grad():
                a = x + 1
        with torch.no_grad(), torch.enable_grad():
            b = self.fc(x)
        c = self.features(x)
        if b.requires_grad:
            return a + b + c
        return a


def make():
    return GradModes()
