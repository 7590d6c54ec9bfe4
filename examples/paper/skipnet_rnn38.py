"""SkipNet ResNet-38 with a recurrent gate (DyCL paper, model 5; Wang et al., ECCV 2018):
a CIFAR ResNet with [6, 6, 6] basic blocks (widths 16, 32, 64). After every block an
embedding of its output (average pool + 1x1 conv) feeds one LSTM cell shared by all
blocks; linear + sigmoid of its hidden state decides whether the next block runs.
The (h, c) state is threaded through every block. Input 1x3x32x32."""

import torch
import torch.nn.functional as F
from torch import nn

from _common import calibrated, conv3x3, cover_paths, init_weights, random_images

KEY = "skipnet_rnn38"


class BasicBlock(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.last_bn = self.bn2
        self.downsample = downsample

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + residual)


class RNNGate(nn.Module):
    """LSTM cell -> linear projection -> sigmoid; returns (hard mask, prob, new state)."""

    def __init__(self, input_dim: int, hidden_dim: int):
        super().__init__()
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


class ResNet38RecurrentGateSP(nn.Module):
    """Modules are ``group{g}_layer{i}`` / ``group{g}_ds{i}`` / ``group{g}_gate{i}``
    attributes, as in the reference implementation."""

    def __init__(self, layers=(6, 6, 6), widths=(16, 32, 64), num_classes: int = 10, embed_dim: int = 10,
                 hidden_dim: int = 10):
        super().__init__()
        self.num_layers = list(layers)
        self.embed_dim = embed_dim
        self.inplanes = widths[0]
        self.conv1 = conv3x3(3, widths[0])
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        pool_size = 32
        for g, (n, planes) in enumerate(zip(layers, widths)):
            stride = 1 if g == 0 else 2
            pool_size = pool_size // stride
            for i in range(n):
                s = stride if i == 0 else 1
                ds = None
                if s != 1 or self.inplanes != planes:
                    ds = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, s, bias=False), nn.BatchNorm2d(planes))
                setattr(self, f"group{g + 1}_ds{i}", ds)
                setattr(self, f"group{g + 1}_layer{i}", BasicBlock(self.inplanes, planes, s, ds))
                setattr(self, f"group{g + 1}_gate{i}",
                        nn.Sequential(nn.AvgPool2d(pool_size), nn.Conv2d(planes, embed_dim, 1, 1)))
                self.inplanes = planes
        self.control = RNNGate(embed_dim, hidden_dim)
        self.avgpool = nn.AvgPool2d(pool_size)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        batch_size = x.size(0)
        x = self.relu(self.bn1(self.conv1(x)))
        hidden = self.control.init_hidden(batch_size, x.device)
        x = getattr(self, "group1_layer0")(x)  # the first block always runs
        gate_feature = getattr(self, "group1_gate0")(x)
        mask, gprob, hidden = self.control(gate_feature, hidden)
        prev = x
        for g in range(3):
            for i in range(0 + int(g == 0), self.num_layers[g]):
                if getattr(self, f"group{g + 1}_ds{i}") is not None:
                    prev = getattr(self, f"group{g + 1}_ds{i}")(prev)
                if mask:
                    x = getattr(self, f"group{g + 1}_layer{i}")(x)
                else:
                    x = prev
                prev = x
                gate_feature = getattr(self, f"group{g + 1}_gate{i}")(x)
                mask, gprob, hidden = self.control(gate_feature, hidden)
        x = self.avgpool(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)

    def _names(self):
        return [(g + 1, i) for g in range(3) for i in range(self.num_layers[g])]

    @torch.no_grad()
    def executed_blocks(self, x) -> list[str]:
        """Per image of the batch, '1' / '0' per gated block (all but the first): run or
        skipped; plain PyTorch (both outcomes computed, then selected)."""
        bits = []
        h = self.relu(self.bn1(self.conv1(x)))
        state = self.control.init_hidden(x.shape[0])
        h = self.group1_layer0(h)
        state = self.control.rnn(self.group1_gate0(h).flatten(1), state)
        prev = h
        for g, i in self._names()[1:]:
            run = torch.sigmoid(self.control.proj(state[0]))[:, 0] > 0.5
            bits.append(run)
            ds = getattr(self, f"group{g}_ds{i}")
            if ds is not None:
                prev = ds(prev)
            h = torch.where(run.view(-1, 1, 1, 1), getattr(self, f"group{g}_layer{i}")(h), prev)
            prev = h
            state = self.control.rnn(getattr(self, f"group{g}_gate{i}")(h).flatten(1), state)
        return ["".join("1" if b else "0" for b in row) for row in torch.stack(bits, 1).tolist()]


def _build():
    torch.manual_seed(0)
    model = ResNet38RecurrentGateSP()
    init_weights(model, branch_gain=0.5)
    return model


@torch.no_grad()
def _calibrate_gates(model: ResNet38RecurrentGateSP) -> None:
    """Data-dependent init (LSUV-style) on a random calibration batch: standardise each
    gate embedding, then centre the shared projection so about half of the decisions
    run a block. Untouched, the random LSTM saturates and always takes the same path."""
    x = random_images(torch.Generator().manual_seed(0), 128, 32)
    h = model.relu(model.bn1(model.conv1(x)))
    state = model.control.init_hidden(x.shape[0])
    logits = []
    for g, i in model._names():
        h = getattr(model, f"group{g}_layer{i}")(h)
        gate = getattr(model, f"group{g}_gate{i}")
        emb = gate(h).flatten(1)
        mean, std = emb.mean(0), emb.std(0)
        gate[1].weight /= std.view(-1, 1, 1, 1)
        gate[1].bias.copy_((gate[1].bias - mean) / std)
        state = model.control.rnn(gate(h).flatten(1), state)
        logits.append(model.control.proj(state[0]))
    model.control.proj.bias -= torch.cat(logits).median()


def make_model() -> nn.Module:
    return calibrated(KEY, _build, _calibrate_gates)


def example_inputs():
    return [torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs whose run masks of the 17 gated blocks differ, together covering both
    outcomes of as many gates as a few hundred random images give; keys are the masks."""
    model = make_model()
    images = random_images(torch.Generator().manual_seed(11), 256, 32)
    return cover_paths(model.executed_blocks(images), images, lambda x: model.executed_blocks(x)[0], "mask_")
