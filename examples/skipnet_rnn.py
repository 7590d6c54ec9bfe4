"""SkipNet (Wang et al., ECCV 2018) with a recurrent gate: one LSTM cell, shared by
all residual blocks, reads a pooled embedding of each block's output and decides
whether the next block runs. Its (h, c) state is carried from block to block.

Modules are registered as ``group{g}_layer{i}`` / ``group{g}_ds{i}`` /
``group{g}_gate{i}`` attributes, as in the reference implementation."""

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
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + residual)


class RNNGate(nn.Module):
    """LSTM cell → linear projection → sigmoid; returns (hard mask, prob, new state)."""

    def __init__(self, input_dim: int, hidden_dim: int):
        super().__init__()
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.rnn = nn.LSTMCell(input_dim, hidden_dim)
        self.proj = nn.Linear(hidden_dim, 1)
        self.prob = nn.Sigmoid()

    def init_hidden(self, batch_size: int, device=None):
        return (torch.zeros(batch_size, self.hidden_dim, device=device),
                torch.zeros(batch_size, self.hidden_dim, device=device))

    def forward(self, x, hidden):
        h, c = self.rnn(x.view(x.size(0), -1), hidden)
        prob = self.prob(self.proj(h))
        mask = prob > 0.5
        return mask, prob, (h, c)


class ResNetRecurrentGateSP(nn.Module):
    """SkipNet-style ResNet for 32x32 inputs: three groups of ``layers[g]`` basic blocks,
    one recurrent gate shared across all of them."""

    def __init__(self, block=BasicBlock, layers=(2, 2, 2), widths=(8, 16, 32), num_classes: int = 10,
                 embed_dim: int = 8, hidden_dim: int = 8):
        super().__init__()
        self.num_layers = list(layers)
        self.embed_dim = embed_dim
        self.hidden_dim = hidden_dim
        self.inplanes = widths[0]
        self.conv1 = conv3x3(3, widths[0])
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)

        pool_size = 32
        for g, (n, planes) in enumerate(zip(layers, widths)):
            stride = 1 if g == 0 else 2
            pool_size = pool_size // stride
            for i in range(n):
                ds, layer, gate = self._make_layer(block, planes, stride if i == 0 else 1, pool_size)
                setattr(self, "group{}_ds{}".format(g + 1, i), ds)
                setattr(self, "group{}_layer{}".format(g + 1, i), layer)
                setattr(self, "group{}_gate{}".format(g + 1, i), gate)

        self.control = RNNGate(embed_dim, hidden_dim)
        self.avgpool = nn.AvgPool2d(pool_size)
        self.fc = nn.Linear(widths[-1] * block.expansion, num_classes)
        self._initialize_weights()

    def _make_layer(self, block, planes: int, stride: int, pool_size: int):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layer = block(self.inplanes, planes, stride, downsample)
        self.inplanes = planes * block.expansion
        # the gate's input: a pooled, projected embedding of the block's output
        gate_layer = nn.Sequential(
            nn.AvgPool2d(pool_size),
            nn.Conv2d(planes * block.expansion, self.embed_dim, kernel_size=1, stride=1),
        )
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
        batch_size = x.size(0)
        x = self.relu(self.bn1(self.conv1(x)))
        hidden = self.control.init_hidden(batch_size, x.device)

        # the first block of the first group always runs
        x = getattr(self, "group1_layer0")(x)
        gate_feature = getattr(self, "group1_gate0")(x)
        mask, gprob, hidden = self.control(gate_feature, hidden)
        prev = x
        for g in range(3):
            for i in range(0 + int(g == 0), self.num_layers[g]):
                if getattr(self, "group{}_ds{}".format(g + 1, i)) is not None:
                    prev = getattr(self, "group{}_ds{}".format(g + 1, i))(prev)
                if mask:
                    x = getattr(self, "group{}_layer{}".format(g + 1, i))(x)
                else:
                    x = prev
                prev = x
                gate_feature = getattr(self, "group{}_gate{}".format(g + 1, i))(x)
                mask, gprob, hidden = self.control(gate_feature, hidden)

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
def _calibrate_gates(model: ResNetRecurrentGateSP, gen: torch.Generator) -> None:
    """Data-dependent init (LSUV-style) on a random calibration batch: standardise each
    gate embedding, then centre the shared projection so about half of the decisions
    run a block. Untouched, the random LSTM saturates and always takes the same path."""
    h = model.relu(model.bn1(model.conv1(_random_image(gen, 64))))
    state = (torch.zeros(64, model.hidden_dim), torch.zeros(64, model.hidden_dim))
    logits = []
    for g in range(3):
        for i in range(model.num_layers[g]):
            h = getattr(model, f"group{g + 1}_layer{i}")(h)
            gate = getattr(model, f"group{g + 1}_gate{i}")
            emb = gate(h).flatten(1)
            mean, std = emb.mean(0), emb.std(0)
            gate[1].weight /= std.view(-1, 1, 1, 1)
            gate[1].bias.copy_((gate[1].bias - mean) / std)
            state = model.control.rnn(gate(h).flatten(1), state)
            logits.append(model.control.proj(state[0]))
    model.control.proj.bias -= torch.cat(logits).median()


def make_model() -> nn.Module:
    torch.manual_seed(0)
    model = ResNetRecurrentGateSP().eval()
    _calibrate_gates(model, torch.Generator().manual_seed(0))
    return model


def example_inputs():
    return (torch.randn(1, 3, 32, 32),)


def executed_blocks(model: ResNetRecurrentGateSP, x: torch.Tensor) -> list[str]:
    """Per image of the batch, '1' / '0' per gated block (all but the first): run or
    skipped; recomputed in plain PyTorch (both outcomes computed, then selected)."""
    names = [(g + 1, i) for g in range(3) for i in range(model.num_layers[g])]
    bits = []
    with torch.no_grad():
        h = model.relu(model.bn1(model.conv1(x)))
        state = (torch.zeros(x.shape[0], model.hidden_dim), torch.zeros(x.shape[0], model.hidden_dim))
        h = model.group1_layer0(h)
        state = model.control.rnn(model.group1_gate0(h).flatten(1), state)
        prev = h
        for g, i in names[1:]:
            run = torch.sigmoid(model.control.proj(state[0]))[:, 0] > 0.5
            bits.append(run)
            ds = getattr(model, f"group{g}_ds{i}")
            if ds is not None:
                prev = ds(prev)
            h = torch.where(run.view(-1, 1, 1, 1), getattr(model, f"group{g}_layer{i}")(h), prev)
            prev = h
            state = model.control.rnn(getattr(model, f"group{g}_gate{i}")(h).flatten(1), state)
    return ["".join("1" if b else "0" for b in row) for row in torch.stack(bits, 1).tolist()]


def branch_inputs():
    """Inputs covering both outcomes (run / skip) of every gate, plus the all-run and
    all-skip paths; names are the run masks of the gated blocks."""
    model = make_model()
    n_gated = sum(model.num_layers) - 1
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
