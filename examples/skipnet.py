"""SkipNet (Wang et al., ECCV 2018) with feed-forward gates: a CIFAR ResNet whose
residual blocks are each preceded by a small gate network that decides, from the
previous block's output, whether the next block runs or is skipped."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        residual = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        out = self.relu(out)
        return out


class FeedforwardGateI(nn.Module):
    """Max-pool, two 3x3 convs (the second with stride 2), average pool, and a 1x1
    conv to two logits; returns the probability of executing the next block."""

    def __init__(self, pool_size: int = 5, channel: int = 10):
        super().__init__()
        self.pool_size = pool_size
        self.channel = channel
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
        self.linear_layer = nn.Conv2d(in_channels=channel, out_channels=2, kernel_size=1, stride=1)
        self.prob_layer = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.maxpool(x)
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.relu2(self.bn2(self.conv2(x)))
        x = self.avg_layer(x)
        x = self.linear_layer(x).flatten(1)
        return self.prob_layer(x)


class ResNetFeedForwardSG(nn.Module):
    """SkipNet-style ResNet for 32x32 inputs: three groups of ``layers[g]`` basic blocks."""

    def __init__(self, block=BasicBlock, layers=(2, 2, 2), widths=(8, 16, 32), num_classes: int = 10,
                 gate_threshold: float = 0.5):
        super().__init__()
        self.num_layers = list(layers)
        self.gate_threshold = gate_threshold
        self.inplanes = widths[0]
        self.conv1 = conv3x3(3, widths[0])
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)

        # Flat lists over all blocks of all groups: ds[k] is None unless block k changes shape.
        self.blocks = nn.ModuleList()
        self.ds = nn.ModuleList()
        self.gates = nn.ModuleList()
        pool_size = 32
        for g, (n, planes) in enumerate(zip(layers, widths)):
            stride = 1 if g == 0 else 2
            pool_size = pool_size // stride
            for i in range(n):
                ds, blk, gate = self._make_layer(block, planes, stride if i == 0 else 1, pool_size)
                self.ds.append(ds)
                self.blocks.append(blk)
                self.gates.append(gate)

        self.avgpool = nn.AvgPool2d(pool_size)
        self.fc = nn.Linear(widths[-1] * block.expansion, num_classes)
        self._initialize_weights()

    def _make_layer(self, block, planes: int, stride: int, pool_size: int):
        """One block, its optional downsample (shared with the skip path) and its gate."""
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layer = block(self.inplanes, planes, stride, downsample)
        self.inplanes = planes * block.expansion
        gate_layer = FeedforwardGateI(pool_size=pool_size, channel=planes * block.expansion)
        return downsample, layer, gate_layer

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2.0 / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))

        # the first block always runs
        x = self.blocks[0](x)
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


def _random_image(gen: torch.Generator, batch: int = 1) -> torch.Tensor:
    """A colour offset, white noise and a smooth pattern, each with a log-uniform scale."""
    def scale():
        return torch.empty(batch, 1, 1, 1).uniform_(-2.0, 2.5, generator=gen).exp()

    smooth = F.interpolate(torch.randn(batch, 3, 4, 4, generator=gen), size=32, mode="bilinear", align_corners=False)
    return (torch.randn(batch, 3, 1, 1, generator=gen) * scale()
            + torch.randn(batch, 3, 32, 32, generator=gen) * scale() + smooth * scale())


@torch.no_grad()
def _balance_gates(model: ResNetFeedForwardSG, gen: torch.Generator) -> None:
    """Data-dependent init: shift each gate's bias so it splits a random calibration
    batch about evenly (random gates on ReLU features are otherwise nearly constant)."""
    h = model.relu(model.bn1(model.conv1(_random_image(gen, 64))))
    h = model.blocks[0](h)
    for k in range(len(model.blocks) - 1):
        p = model.gates[k](h)
        model.gates[k].linear_layer.bias[1] -= (p[:, 1].log() - p[:, 0].log()).median()
        h = model.blocks[k + 1](h)


def make_model() -> nn.Module:
    torch.manual_seed(0)
    model = ResNetFeedForwardSG().eval()
    _balance_gates(model, torch.Generator().manual_seed(0))
    return model


def example_inputs():
    return (torch.randn(1, 3, 32, 32),)


def executed_blocks(model: ResNetFeedForwardSG, x: torch.Tensor) -> list[str]:
    """Per image of the batch, '1' / '0' per gated block (blocks 1..N-1): run or
    skipped; recomputed in plain PyTorch (both outcomes computed, then selected)."""
    bits = []
    with torch.no_grad():
        h = model.relu(model.bn1(model.conv1(x)))
        h = model.blocks[0](h)
        prev = h
        for k in range(1, len(model.blocks)):
            run = model.gates[k - 1](h)[:, 1] > model.gate_threshold
            bits.append(run)
            if model.ds[k] is not None:
                prev = model.ds[k](prev)
            h = torch.where(run.view(-1, 1, 1, 1), model.blocks[k](h), prev)
            prev = h
    return ["".join("1" if b else "0" for b in row) for row in torch.stack(bits, 1).tolist()]


def branch_inputs():
    """Inputs covering both outcomes (run / skip) of every gate, plus the all-run and
    all-skip paths; names are the run masks of blocks 1..N-1."""
    model = make_model()
    n_gated = len(model.blocks) - 1
    extremes = {"1" * n_gated, "0" * n_gated}
    gen = torch.Generator().manual_seed(11)
    found = {}
    seen = set()  # (block, outcome) pairs covered so far
    for _ in range(8):  # candidates are screened in batches, then confirmed one by one
        candidates = _random_image(gen, 128)
        for i, bits in enumerate(executed_blocks(model, candidates)):
            new = set(enumerate(bits)) - seen
            if (new or bits in extremes) and f"mask_{bits}" not in found:
                x = candidates[i : i + 1].clone()
                if executed_blocks(model, x)[0] == bits:
                    found[f"mask_{bits}"] = (x,)
                    seen |= new
        if len(seen) == 2 * n_gated and all(f"mask_{b}" in found for b in extremes):
            break
    return found
