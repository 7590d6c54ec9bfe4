"""BlockDrop (Wu et al., CVPR 2018): a small policy network looks at the image once
and outputs, for every residual block of a CIFAR ResNet, the probability of
keeping it; blocks whose probability is at most 0.5 are dropped."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """The residual branch only; the shortcut is added by the network."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return out


class DownsampleB(nn.Module):
    """Parameter-free shortcut: average-pool, then zero-pad the channels."""

    def __init__(self, nIn: int, nOut: int, stride: int):
        super().__init__()
        self.avg = nn.AvgPool2d(stride)
        self.expand_ratio = nOut // nIn

    def forward(self, x):
        x = self.avg(x)
        return torch.cat([x] + [x.mul(0)] * (self.expand_ratio - 1), 1)


class FlatResNet32(nn.Module):
    def __init__(self, block, layers, widths=(8, 16, 32), num_classes: int = 10):
        super().__init__()
        self.inplanes = widths[0]
        self.seed = nn.Sequential(conv3x3(3, widths[0]), nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        self.layer_config = list(layers)
        strides = [1, 2, 2]
        blocks, ds = [], []
        for i in range(3):
            blocks_i, ds_i = self._make_layer(block, widths[i], layers[i], stride=strides[i])
            blocks.append(nn.ModuleList(blocks_i))
            ds.append(ds_i)
        self.blocks = nn.ModuleList(blocks)
        self.ds = nn.ModuleList(ds)
        self.avgpool = nn.AvgPool2d(8)
        self.fc = nn.Linear(widths[2] * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2.0 / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)

    def _make_layer(self, block, planes: int, blocks: int, stride: int = 1):
        downsample = nn.Sequential()
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = DownsampleB(self.inplanes, planes * block.expansion, stride)
        layers = [block(self.inplanes, planes, stride)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return layers, downsample

    def forward_full(self, x):
        """Every block, no policy (used as the policy network's backbone)."""
        x = self.seed(x)
        for segment, num_blocks in enumerate(self.layer_config):
            for b in range(num_blocks):
                residual = self.ds[segment](x) if b == 0 else x
                x = F.relu(residual + self.blocks[segment][b](x))
        x = self.avgpool(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)

    def forward(self, x, policy):
        """Block t runs iff policy[0, t] > 0.5 (batch 1)."""
        x = self.seed(x)
        t = 0
        for segment, num_blocks in enumerate(self.layer_config):
            for b in range(num_blocks):
                residual = self.ds[segment](x) if b == 0 else x
                x = F.relu(residual + self.blocks[segment][b](x)) if policy[0, t] > 0.5 else F.relu(residual)
                t += 1
        x = self.avgpool(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


class Policy32(nn.Module):
    """The agent: a ResNet-8 backbone with a sigmoid head of one unit per block."""

    def __init__(self, layer_config=(1, 1, 1), num_blocks: int = 6):
        super().__init__()
        self.features = FlatResNet32(BasicBlock, layer_config, widths=(8, 8, 16))
        self.feat_dim = self.features.fc.weight.data.shape[1]
        self.features.fc = nn.Sequential()
        self.logit = nn.Linear(self.feat_dim, num_blocks)
        self.vnet = nn.Linear(self.feat_dim, 1)

    def forward(self, x):
        x = self.features.forward_full(x)
        value = self.vnet(x)
        probs = torch.sigmoid(self.logit(x))
        return probs, value


class BlockDrop(nn.Module):
    def __init__(self, layers=(2, 2, 2)):
        super().__init__()
        self.agent = Policy32(num_blocks=sum(layers))
        self.rnet = FlatResNet32(BasicBlock, layers)

    def forward(self, x):
        probs, _ = self.agent(x)
        return self.rnet(x, probs)


def _random_image(gen: torch.Generator, batch: int = 1) -> torch.Tensor:
    """A colour offset, white noise and a smooth pattern, each with a log-uniform scale."""
    def scale():
        return torch.empty(batch, 1, 1, 1).uniform_(-2.0, 2.5, generator=gen).exp()

    smooth = F.interpolate(torch.randn(batch, 3, 4, 4, generator=gen), size=32, mode="bilinear", align_corners=False)
    return (torch.randn(batch, 3, 1, 1, generator=gen) * scale()
            + torch.randn(batch, 3, 32, 32, generator=gen) * scale() + smooth * scale())


@torch.no_grad()
def _balance_policy(model: BlockDrop, gen: torch.Generator) -> None:
    """Data-dependent init: standardise each policy logit on a random calibration batch
    and centre it on its median, so each block is kept for about half of the inputs
    (a random head keeps or drops most blocks regardless of the input)."""
    logit = model.agent.logit
    z = logit(model.agent.features.forward_full(_random_image(gen, 128)))
    std = z.std(dim=0)
    logit.weight /= std[:, None]
    logit.bias.copy_((logit.bias - z.median(dim=0).values) / std)


def make_model() -> nn.Module:
    torch.manual_seed(0)
    model = BlockDrop().eval()
    _balance_policy(model, torch.Generator().manual_seed(0))
    return model


def example_inputs():
    return (torch.randn(1, 3, 32, 32),)


def kept_blocks(model: BlockDrop, x: torch.Tensor) -> list[str]:
    """Per image of the batch, '1' / '0' per block: kept or dropped by the policy;
    recomputed in plain PyTorch."""
    with torch.no_grad():
        probs = torch.sigmoid(model.agent.logit(model.agent.features.forward_full(x)))
    return ["".join("1" if p > 0.5 else "0" for p in row) for row in probs.tolist()]


def branch_inputs():
    """Inputs covering both outcomes (keep / drop) of every block, plus the keep-all and
    drop-all policies; names are the policies."""
    model = make_model()
    n = sum(model.rnet.layer_config)
    extremes = {"1" * n, "0" * n}
    gen = torch.Generator().manual_seed(5)
    found = {}
    seen = set()  # (block, outcome) pairs covered so far
    for _ in range(16):  # candidates are screened in batches, then confirmed one by one
        candidates = _random_image(gen, 256)
        for i, bits in enumerate(kept_blocks(model, candidates)):
            new = set(enumerate(bits)) - seen
            if (new or bits in extremes) and f"policy_{bits}" not in found:
                x = candidates[i : i + 1].clone()
                if kept_blocks(model, x)[0] == bits:
                    found[f"policy_{bits}"] = (x,)
                    seen |= new
        if len(seen) == 2 * n and all(f"policy_{b}" in found for b in extremes):
            break
    return found
