"""Shallow-Deep ResNet56 (DyCL paper, model 3): CIFAR-style ResNet with [9, 9, 9] basic
blocks (widths 16, 32, 64), internal classifiers after blocks 3 and 7 of every stage;
exit when softmax max >= 0.5. Input 1x3x256x256, 200 classes."""

import torch
import torch.nn.functional as F
from torch import nn

from _common import InternalClassifier, ShallowDeepNet, conv3x3, init_weights, sdn_branch_inputs, sdn_make_model

KEY = "sdn_resnet56"


class BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.conv1 = conv3x3(c_in, c_out, stride)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = conv3x3(c_out, c_out)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.last_bn = self.bn2
        self.shortcut = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet56SDN(ShallowDeepNet):
    def __init__(self, num_blocks=(9, 9, 9), widths=(16, 32, 64), ic_at=(3, 7), num_classes: int = 200,
                 tau: float = 0.5):
        super().__init__()
        self.tau = tau
        self.stem = nn.Sequential(conv3x3(3, widths[0]), nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        self.layers = nn.ModuleList()
        self.has_ic = []
        ics = []
        c_in = widths[0]
        for s, (n, w) in enumerate(zip(num_blocks, widths)):
            for b in range(n):
                self.layers.append(BasicBlock(c_in, w, 2 if (s > 0 and b == 0) else 1))
                self.has_ic.append(b in ic_at)
                ics.append(InternalClassifier(w, num_classes) if b in ic_at else nn.Identity())
                c_in = w
        self.ics = nn.ModuleList(ics)
        self.end_layers = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, num_classes))


def _build():
    torch.manual_seed(0)
    model = ResNet56SDN()
    init_weights(model, branch_gain=0.3)
    return model


def make_model() -> nn.Module:
    return sdn_make_model(KEY, _build, n_calib=8)


def example_inputs():
    return [torch.randn(1, 3, 256, 256, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs answered by the internal classifiers ic<layer> and by the final head."""
    return sdn_branch_inputs(KEY, make_model)
