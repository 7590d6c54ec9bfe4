"""Shallow-Deep VGG16-BN (DyCL paper, model 2): 13 conv-BN-ReLU layers, internal
classifiers after layers 1, 3, 5, 7, 9, 11; exit when softmax max >= 0.9.
Input 1x3x256x256, 200 classes."""

import torch
from torch import nn

from _common import InternalClassifier, ShallowDeepNet, init_weights, sdn_branch_inputs, sdn_make_model

KEY = "sdn_vgg16"


class ConvBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, pool: bool):
        super().__init__()
        layers = [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]
        if pool:
            layers.append(nn.MaxPool2d(2))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class VGG16SDN(ShallowDeepNet):
    WIDTHS = (64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512)
    POOLS = (0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1)
    ADD_IC = (0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0)

    def __init__(self, num_classes: int = 200, tau: float = 0.9):
        super().__init__()
        self.tau = tau
        self.stem = nn.Identity()
        self.layers = nn.ModuleList()
        self.has_ic = [bool(a) for a in self.ADD_IC]
        ics = []
        c_in = 3
        for w, p, ic in zip(self.WIDTHS, self.POOLS, self.ADD_IC):
            self.layers.append(ConvBlock(c_in, w, bool(p)))
            ics.append(InternalClassifier(w, num_classes) if ic else nn.Identity())
            c_in = w
        self.ics = nn.ModuleList(ics)
        self.end_layers = nn.Sequential(
            nn.AdaptiveAvgPool2d(2), nn.Flatten(),
            nn.Linear(512 * 4, 512), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(512, 512), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(512, num_classes))


def _build():
    torch.manual_seed(0)
    model = VGG16SDN()
    init_weights(model)
    return model


def make_model() -> nn.Module:
    return sdn_make_model(KEY, _build, n_calib=8)


def example_inputs():
    return [torch.randn(1, 3, 256, 256, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs answered by the internal classifiers ic<layer> and by the final head."""
    return sdn_branch_inputs(KEY, make_model)
