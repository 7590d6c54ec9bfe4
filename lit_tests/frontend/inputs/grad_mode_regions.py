import torch
from torch import nn


class GradModeRegions(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @torch.no_grad()
    def forward(self, x):
        h = self.fc(x)
        match int(h.sum() > 0):  # (Python: a region)
            case 1:
                with torch.enable_grad():
                    h = self.fc(h)
            case _:
                h = -h
        return h


def make():
    return GradModeRegions()
