"""Shallow-Deep WideResNet-32-4 (DyCL paper, model 4): pre-activation wide basic blocks,
[5, 5, 5] per stage, widths 64, 128, 256; internal classifiers after blocks 1 and 3 of
every stage; exit when softmax max >= 0.5. Input 1x3x256x256 (stride-2 stem), 200 classes."""

import torch
import torch.nn.functional as F
from torch import nn

from _common import InternalClassifier, ShallowDeepNet, conv3x3, init_weights, sdn_branch_inputs, sdn_make_model

KEY = "sdn_wrn32_4"


class WideBasic(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int = 1, dropout: float = 0.3):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1, bias=True)
        self.dropout = nn.Dropout(dropout)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, stride=stride, padding=1, bias=True)
        self.last_bn = self.bn2
        self.shortcut = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=True))

    def forward(self, x):
        out = self.dropout(self.conv1(F.relu(self.bn1(x))))
        out = self.conv2(F.relu(self.bn2(out)))
        return out + self.shortcut(x)


class WideResNetSDN(ShallowDeepNet):
    def __init__(self, depth: int = 32, widen: int = 4, ic_at=(1, 3), num_classes: int = 200, tau: float = 0.5):
        super().__init__()
        self.tau = tau
        n = (depth - 2) // 6
        widths = (16 * widen, 32 * widen, 64 * widen)
        # At 256x256 a stride-1 (CIFAR) stem costs ~70 GMAC per image; a stride-2 one ~18.
        self.stem = conv3x3(3, 16, stride=2)
        self.layers = nn.ModuleList()
        self.has_ic = []
        ics = []
        c_in = 16
        for s, w in enumerate(widths):
            for b in range(n):
                self.layers.append(WideBasic(c_in, w, 2 if (s > 0 and b == 0) else 1))
                self.has_ic.append(b in ic_at)
                ics.append(InternalClassifier(w, num_classes) if b in ic_at else nn.Identity())
                c_in = w
        self.ics = nn.ModuleList(ics)
        self.end_layers = nn.Sequential(nn.BatchNorm2d(c_in), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1),
                                        nn.Flatten(), nn.Linear(c_in, num_classes))


def _build():
    torch.manual_seed(0)
    model = WideResNetSDN()
    init_weights(model, branch_gain=0.5)
    return model


def make_model() -> nn.Module:
    return sdn_make_model(KEY, _build, n_calib=8)


def example_inputs():
    return [torch.randn(1, 3, 256, 256, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs answered by the internal classifiers ic<layer> and by the final head."""
    return sdn_branch_inputs(KEY, make_model)
