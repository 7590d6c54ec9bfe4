import torch
from torch import nn


class ExitNow(Exception):
    def __init__(self, logits, layer):
        super().__init__("exit")
        self.logits = logits
        self.layer = layer


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if x.sum() > 0:
                raise ExitNow(x, i)
        return x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, x):
        assert x.dim() == 2
        if x.abs().max() > 100:
            raise ValueError("input too large", 100)
        try:
            out = self.encoder(x)
        except ExitNow as e:
            return e.logits, e.layer
        return out, -1


def make():
    torch.manual_seed(0)
    return Model().eval()
