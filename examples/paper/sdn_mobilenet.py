"""Shallow-Deep MobileNet (DyCL paper, model 1): 13 depthwise-separable blocks,
internal classifiers after blocks 2, 4, 6, 8, 10; exit when softmax max >= 0.5.
Input 1x3x256x256, 200 classes."""

import torch
from torch import nn

from _common import InternalClassifier, ShallowDeepNet, init_weights, sdn_branch_inputs, sdn_make_model

KEY = "sdn_mobilenet"


class DepthwiseSeparable(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False), nn.BatchNorm2d(c_in), nn.ReLU(inplace=True),
            nn.Conv2d(c_in, c_out, 1, 1, 0, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.layers(x)


class MobileNetSDN(ShallowDeepNet):
    CFG = (64, (128, 2), 128, (256, 2), 256, (512, 2), 512, 512, 512, 512, 512, (1024, 2), 1024)
    ADD_IC = (0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0)

    def __init__(self, num_classes: int = 200, tau: float = 0.5):
        super().__init__()
        self.tau = tau
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True))
        self.layers = nn.ModuleList()
        self.has_ic = [bool(a) for a in self.ADD_IC]
        ics = []
        c_in = 32
        for cfg, ic in zip(self.CFG, self.ADD_IC):
            c_out, stride = cfg if isinstance(cfg, tuple) else (cfg, 1)
            self.layers.append(DepthwiseSeparable(c_in, c_out, stride))
            ics.append(InternalClassifier(c_out, num_classes) if ic else nn.Identity())
            c_in = c_out
        self.ics = nn.ModuleList(ics)
        self.end_layers = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1024, num_classes))


def _build():
    torch.manual_seed(0)
    model = MobileNetSDN()
    init_weights(model)
    return model


def make_model() -> nn.Module:
    return sdn_make_model(KEY, _build, n_calib=7)


def example_inputs():
    return [torch.randn(1, 3, 256, 256, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs answered by the internal classifiers ic<layer> and by the final head."""
    return sdn_branch_inputs(KEY, make_model)
