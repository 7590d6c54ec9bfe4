"""BlockDrop ResNet-110 (DyCL paper, model 9; Wu et al., CVPR 2018): a policy network
(a ResNet-8 with a sigmoid head of 54 units) looks at the image once and gives, for
every one of the 54 residual blocks of a CIFAR ResNet-110 ([18, 18, 18] basic blocks,
widths 16, 32, 64), the probability of keeping it; block t runs iff p[0, t] > 0.5.
Input 1x3x32x32."""

import torch
import torch.nn.functional as F
from torch import nn

from _common import calibrated, conv3x3, cover_paths, init_weights, random_images

KEY = "blockdrop110"


class BasicBlock(nn.Module):
    """The residual branch only; the shortcut is added by the network."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.last_bn = self.bn2

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return self.bn2(self.conv2(out))


class DownsampleB(nn.Module):
    """Parameter-free shortcut: average-pool, then zero-pad the channels."""

    def __init__(self, n_in: int, n_out: int, stride: int):
        super().__init__()
        self.avg = nn.AvgPool2d(stride)
        self.expand_ratio = n_out // n_in

    def forward(self, x):
        x = self.avg(x)
        return torch.cat([x] + [x.mul(0)] * (self.expand_ratio - 1), 1)


class FlatResNet32(nn.Module):
    def __init__(self, layers, widths=(16, 32, 64), num_classes: int = 10):
        super().__init__()
        self.inplanes = widths[0]
        self.seed = nn.Sequential(conv3x3(3, widths[0]), nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        self.layer_config = list(layers)
        blocks, ds = [], []
        for i, stride in enumerate((1, 2, 2)):
            ds.append(nn.Sequential() if stride == 1 and self.inplanes == widths[i]
                      else DownsampleB(self.inplanes, widths[i], stride))
            blk = [BasicBlock(self.inplanes, widths[i], stride)]
            self.inplanes = widths[i]
            blk += [BasicBlock(widths[i], widths[i]) for _ in range(1, layers[i])]
            blocks.append(nn.ModuleList(blk))
        self.blocks = nn.ModuleList(blocks)
        self.ds = nn.ModuleList(ds)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward_full(self, x):
        """Every block, no policy (the policy network's backbone)."""
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
    """The agent: a ResNet-8 backbone ([1, 1, 1]) with a sigmoid head of one unit per block."""

    def __init__(self, num_blocks: int = 54):
        super().__init__()
        self.features = FlatResNet32((1, 1, 1), widths=(16, 32, 64))
        self.features.fc = nn.Sequential()
        self.logit = nn.Linear(64, num_blocks)
        self.vnet = nn.Linear(64, 1)

    def forward(self, x):
        x = self.features.forward_full(x)
        value = self.vnet(x)
        probs = torch.sigmoid(self.logit(x))
        return probs, value


class BlockDrop(nn.Module):
    def __init__(self, layers=(18, 18, 18)):
        super().__init__()
        self.agent = Policy32(num_blocks=sum(layers))
        self.rnet = FlatResNet32(layers)

    def forward(self, x):
        probs, _ = self.agent(x)
        return self.rnet(x, probs)

    @torch.no_grad()
    def kept_blocks(self, x) -> list[str]:
        """Per image of the batch, '1' / '0' per block: kept or dropped by the policy."""
        probs = torch.sigmoid(self.agent.logit(self.agent.features.forward_full(x)))
        return ["".join("1" if p > 0.5 else "0" for p in row) for row in probs.tolist()]


def _build():
    torch.manual_seed(0)
    model = BlockDrop()
    init_weights(model, branch_gain=0.3)
    return model


@torch.no_grad()
def _balance_policy(model: BlockDrop) -> None:
    """Data-dependent init: standardise each policy logit on a random calibration batch
    and centre it on its median, so each block is kept for about half of the inputs
    (a random head keeps or drops most blocks regardless of the input)."""
    logit = model.agent.logit
    z = logit(model.agent.features.forward_full(random_images(torch.Generator().manual_seed(0), 256, 32)))
    std = z.std(dim=0)
    logit.weight /= std[:, None]
    logit.bias.copy_((logit.bias - z.median(dim=0).values) / std)


def make_model() -> nn.Module:
    return calibrated(KEY, _build, _balance_policy)


def example_inputs():
    return [torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs whose policies (54 keep/drop bits) differ, together covering both outcomes
    of as many blocks as a few hundred random images give; keys are the policies."""
    model = make_model()
    images = random_images(torch.Generator().manual_seed(5), 256, 32)
    return cover_paths(model.kept_blocks(images), images, lambda x: model.kept_blocks(x)[0], "policy_")
