"""Shallow-Deep Network (Kaya et al., ICML 2019): a VGG-style CNN with internal
classifiers (ICs) after some blocks; inference stops at the first IC whose
softmax confidence reaches ``tau``."""

import torch
import torch.nn.functional as F
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, pool: bool):
        super().__init__()
        layers = [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]
        if pool:
            layers.append(nn.MaxPool2d(2))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class InternalClassifier(nn.Module):
    """Pools the feature map to a fixed size and applies a linear layer."""

    def __init__(self, channels: int, num_classes: int, pool_size: int = 2, init_std: float = 0.1):
        super().__init__()
        self.pool_size = pool_size
        self.linear = nn.Linear(channels * pool_size * pool_size, num_classes)
        nn.init.normal_(self.linear.weight, 0, init_std)
        nn.init.zeros_(self.linear.bias)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(x, self.pool_size)
        return self.linear(x.flatten(1))


class ShallowDeep(nn.Module):
    def __init__(self, widths=(16, 16, 32, 32, 64, 64), pools=(False, True, False, True, False, True),
                 add_ic=(False, True, False, True, True, False), num_classes: int = 10, tau: float = 0.5):
        super().__init__()
        self.num_classes = num_classes
        self.tau = tau
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        self.layers = nn.ModuleList()
        self.has_ic = list(add_ic)
        ics = []
        c_in = widths[0]
        for w, p, ic in zip(widths, pools, add_ic):
            self.layers.append(ConvBlock(c_in, w, p))
            # With random weights the shallowest IC would always be the most confident;
            # a larger init gain deeper down (as training tends to give) makes every exit reachable.
            ics.append(InternalClassifier(w, num_classes, init_std=0.02 * 2 ** len(ics)) if ic else nn.Identity())
            c_in = w
        self.ics = nn.ModuleList(ics)
        self.end_layers = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_in, num_classes))
        self._initialize_weights()

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                # non-trivial running statistics, so eval-mode BN is not an identity
                nn.init.uniform_(m.weight, 0.5, 1.5)
                nn.init.uniform_(m.bias, -0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        fwd = self.stem(x)
        for layer_id, layer in enumerate(self.layers):
            fwd = layer(fwd)
            if self.has_ic[layer_id]:
                ic_out = self.ics[layer_id](fwd)
                confidence = torch.max(F.softmax(ic_out[0], dim=0))
                if confidence >= self.tau:
                    return ic_out
        return self.end_layers(fwd)


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return ShallowDeep().eval()


def example_inputs():
    return (torch.randn(1, 3, 32, 32),)


def exits(model: ShallowDeep, x: torch.Tensor) -> list[str]:
    """Per image of the batch, which classifier answers, recomputed in plain PyTorch
    (every IC is evaluated; the first confident one wins)."""
    names = []
    confident = []
    with torch.no_grad():
        fwd = model.stem(x)
        for i, layer in enumerate(model.layers):
            fwd = layer(fwd)
            if model.has_ic[i]:
                names.append(f"ic{i}")
                confident.append(F.softmax(model.ics[i](fwd), dim=1).max(dim=1).values >= model.tau)
    return [next((n for n, c in zip(names, row) if c), "final") for row in torch.stack(confident, 1).tolist()]


def branch_inputs():
    """Inputs that exit at every internal classifier and at the final head."""
    model = make_model()
    want = {f"ic{i}" for i, ic in enumerate(model.has_ic) if ic} | {"final"}
    gen = torch.Generator().manual_seed(7)
    found = {}
    for _ in range(8):  # candidates are screened in batches, then confirmed one by one
        # confidence grows with the input's magnitude: sweep it on a log scale
        scales = torch.empty(64, 1, 1, 1).uniform_(-3.0, 2.5, generator=gen).exp()
        candidates = torch.randn(64, 3, 32, 32, generator=gen) * scales
        for i, name in enumerate(exits(model, candidates)):
            if name not in found:
                x = candidates[i : i + 1].clone()
                if exits(model, x)[0] == name:
                    found[name] = (x,)
        if set(found) == want:
            break
    return found
