"""SkipNet ResNet-38 with feed-forward gates (DyCL paper, model 6; Wang et al., ECCV
2018): a CIFAR ResNet with [6, 6, 6] basic blocks (widths 16, 32, 64); before every
block but the first, a small gate network (max-pool, two 3x3 convs, average pool, 1x1
conv to two logits, softmax) decides from the previous block's output whether the
block runs or is skipped. Input 1x3x32x32."""

import math

import torch
from torch import nn

from _common import calibrated, conv3x3, cover_paths, init_weights, random_images

KEY = "skipnet_ff38"


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.last_bn = self.bn2
        self.downsample = downsample

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        return self.relu(out)


class FeedforwardGateI(nn.Module):
    """Returns the softmax over (skip, run) of the next block."""

    def __init__(self, pool_size: int = 5, channel: int = 10):
        super().__init__()
        self.maxpool = nn.MaxPool2d(2)
        self.conv1 = conv3x3(channel, channel)
        self.bn1 = nn.BatchNorm2d(channel)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(channel, channel, stride=2)
        self.bn2 = nn.BatchNorm2d(channel)
        self.relu2 = nn.ReLU(inplace=True)
        pool_size = math.floor(pool_size / 2)  # for max pooling
        pool_size = math.floor(pool_size / 2 + 0.5)  # for conv stride = 2
        self.avg_layer = nn.AvgPool2d(pool_size)
        self.linear_layer = nn.Conv2d(channel, 2, kernel_size=1, stride=1)
        self.prob_layer = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.maxpool(x)
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.relu2(self.bn2(self.conv2(x)))
        x = self.avg_layer(x)
        x = self.linear_layer(x).flatten(1)
        return self.prob_layer(x)


class ResNet38FeedForwardSG(nn.Module):
    def __init__(self, layers=(6, 6, 6), widths=(16, 32, 64), num_classes: int = 10, gate_threshold: float = 0.5):
        super().__init__()
        self.gate_threshold = gate_threshold
        self.inplanes = widths[0]
        self.conv1 = conv3x3(3, widths[0])
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.blocks = nn.ModuleList()
        self.ds = nn.ModuleList()  # ds[k] is None unless block k changes shape
        self.gates = nn.ModuleList()
        pool_size = 32
        for g, (n, planes) in enumerate(zip(layers, widths)):
            stride = 1 if g == 0 else 2
            pool_size = pool_size // stride
            for i in range(n):
                s = stride if i == 0 else 1
                downsample = None
                if s != 1 or self.inplanes != planes:
                    downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, s, bias=False),
                                               nn.BatchNorm2d(planes))
                self.ds.append(downsample)
                self.blocks.append(BasicBlock(self.inplanes, planes, s, downsample))
                self.gates.append(FeedforwardGateI(pool_size=pool_size, channel=planes))
                self.inplanes = planes
        self.avgpool = nn.AvgPool2d(pool_size)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.blocks[0](x)  # the first block always runs
        mask = self.gates[0](x)[:, 1] > self.gate_threshold
        prev = x
        for k in range(1, len(self.blocks)):
            if self.ds[k] is not None:
                prev = self.ds[k](prev)
            x = self.blocks[k](x) if mask else prev
            prev = x
            mask = self.gates[k](x)[:, 1] > self.gate_threshold
        x = self.avgpool(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)

    @torch.no_grad()
    def executed_blocks(self, x) -> list[str]:
        """Per image of the batch, '1' / '0' per gated block (blocks 1..N-1): run or
        skipped; plain PyTorch (both outcomes computed, then selected)."""
        bits = []
        h = self.blocks[0](self.relu(self.bn1(self.conv1(x))))
        prev = h
        for k in range(1, len(self.blocks)):
            run = self.gates[k - 1](h)[:, 1] > self.gate_threshold
            bits.append(run)
            if self.ds[k] is not None:
                prev = self.ds[k](prev)
            h = torch.where(run.view(-1, 1, 1, 1), self.blocks[k](h), prev)
            prev = h
        return ["".join("1" if b else "0" for b in row) for row in torch.stack(bits, 1).tolist()]


def _build():
    torch.manual_seed(0)
    model = ResNet38FeedForwardSG()
    init_weights(model, branch_gain=0.5)
    return model


@torch.no_grad()
def _balance_gates(model: ResNet38FeedForwardSG) -> None:
    """Data-dependent init: shift each gate's run-logit bias so it splits a random
    calibration batch about evenly (random gates on ReLU features are otherwise
    nearly constant); gates are calibrated in order, on the gated network."""
    x = random_images(torch.Generator().manual_seed(0), 128, 32)
    h = model.blocks[0](model.relu(model.bn1(model.conv1(x))))
    prev = h
    for k in range(len(model.blocks) - 1):
        p = model.gates[k](h)
        model.gates[k].linear_layer.bias[1] -= (p[:, 1].log() - p[:, 0].log()).median()
        run = model.gates[k](h)[:, 1] > model.gate_threshold
        if model.ds[k + 1] is not None:
            prev = model.ds[k + 1](prev)
        h = torch.where(run.view(-1, 1, 1, 1), model.blocks[k + 1](h), prev)
        prev = h


def make_model() -> nn.Module:
    return calibrated(KEY, _build, _balance_gates)


def example_inputs():
    return [torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs whose run masks of blocks 1..17 differ, together covering both outcomes of
    as many gates as a few hundred random images give; keys are the masks."""
    model = make_model()
    images = random_images(torch.Generator().manual_seed(11), 256, 32)
    return cover_paths(model.executed_blocks(images), images, lambda x: model.executed_blocks(x)[0], "mask_")

