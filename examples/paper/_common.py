"""Shared helpers of the paper-size examples (a file starting with ``_``: not an example).

The DyCL paper (ISSTA 2023) evaluates nine dynamic networks with random weights. Random
weights make most data-dependent decisions constant (every input exits at the same
classifier, every gate says the same thing), so each model here gets a small,
seeded, data-dependent initialisation on a batch of random calibration images, like
the small examples in ``examples/``. Calibration runs once per process and is cached:
``make_model()`` then returns a deep copy.
"""

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

_CACHE: dict = {}


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=1, groups=groups, bias=False)


@torch.no_grad()
def init_weights(model: nn.Module, branch_gain: float = 1.0) -> None:
    """Kaiming convolutions and BatchNorms with non-trivial running statistics (so that
    eval-mode BN is no identity). ``branch_gain`` scales the last BN of every residual
    branch (modules with a ``last_bn`` attribute), so deep ResNets do not blow up."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.uniform_(m.bias, -0.2, 0.2)
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    for m in model.modules():
        bn = getattr(m, "last_bn", None)
        if isinstance(bn, nn.BatchNorm2d):
            bn.weight.mul_(branch_gain)
            bn.bias.mul_(branch_gain)


def random_images(gen: torch.Generator, batch: int = 1, size: int = 32) -> torch.Tensor:
    """A colour offset, white noise and a smooth pattern, each with a log-uniform scale."""

    def scale():
        return torch.empty(batch, 1, 1, 1).uniform_(-2.0, 2.5, generator=gen).exp()

    smooth = F.interpolate(torch.randn(batch, 3, 4, 4, generator=gen), size=size, mode="bilinear",
                           align_corners=False)
    return (torch.randn(batch, 3, 1, 1, generator=gen) * scale()
            + torch.randn(batch, 3, size, size, generator=gen) * scale() + smooth * scale())


def calibrated(key: str, build, calibrate) -> nn.Module:
    """``build()`` (seeded), then ``calibrate(model)`` once per process; returns a fresh
    copy of the calibrated model. ``calibrate`` may return extra data (see ``extra``)."""
    if key not in _CACHE:
        model = build().eval()
        extra = calibrate(model)
        _CACHE[key] = (model, extra)
    return copy.deepcopy(_CACHE[key][0]).eval()


def extra(key: str):
    return _CACHE[key][1]


def pick_paths(names: list[str], images: torch.Tensor, path_of, limit: int | None = None) -> dict:
    """The first image of every distinct path name among a screened batch, kept only if
    the path is confirmed on the image alone (batch 1)."""
    found = {}
    for i, name in enumerate(names):
        if name in found:
            continue
        x = images[i : i + 1].clone()
        if path_of(x) == name:
            found[name] = (x,)
        if limit is not None and len(found) >= limit:
            break
    return found


def cover_paths(names, images, path_of, prefix: str, limit: int = 8) -> dict:
    """Greedy: keep an image when its mask covers a (block, outcome) pair not seen yet."""
    found, seen = {}, set()
    for i, bits in enumerate(names):
        new = set(enumerate(bits)) - seen
        if new and prefix + bits not in found:
            x = images[i : i + 1].clone()
            if path_of(x) == bits:
                found[prefix + bits] = (x,)
                seen |= new
        if len(found) >= limit:
            break
    return found


# ---------------------------------------------------------------- Shallow-Deep networks


class InternalClassifier(nn.Module):
    """Pools the feature map to a fixed size and applies a linear layer (SDN's IC)."""

    def __init__(self, channels: int, num_classes: int, pool_size: int = 4):
        super().__init__()
        self.pool_size = pool_size
        self.linear = nn.Linear(channels * pool_size * pool_size, num_classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(x, self.pool_size)
        return self.linear(x.flatten(1))


class ShallowDeepNet(nn.Module):
    """Base of the Shallow-Deep networks (Kaya et al., ICML 2019). Subclasses set
    ``stem``, ``layers`` (ModuleList), ``has_ic`` (list of bool), ``ics`` (ModuleList,
    ``nn.Identity`` where there is none), ``end_layers`` and ``tau``."""

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

    @torch.no_grad()
    def all_logits(self, x):
        """Every IC's logits and the head's, for a batch: [(name, logits)]."""
        out = []
        fwd = self.stem(x)
        for layer_id, layer in enumerate(self.layers):
            fwd = layer(fwd)
            if self.has_ic[layer_id]:
                out.append((f"ic{layer_id}", self.ics[layer_id](fwd)))
        out.append(("final", self.end_layers(fwd)))
        return out

    @torch.no_grad()
    def exits(self, x) -> list[str]:
        """Per image of the batch, the classifier that answers (plain PyTorch)."""
        return exits_from_logits(self.all_logits(x), self.tau)


def exits_from_logits(logits, tau: float) -> list[str]:
    names = [n for n, _ in logits[:-1]]
    conf = torch.stack([F.softmax(z, dim=1).max(dim=1).values >= tau for _, z in logits[:-1]], 1)
    return [next((n for n, c in zip(names, row) if c), "final") for row in conf.tolist()]


def crossing_scale(z: torch.Tensor, tau: float) -> torch.Tensor:
    """Per row of ``z`` (B, C), the smallest s > 0 with max softmax(s z) >= tau
    (max softmax(s z) grows with s); bisection on log s."""
    lo = torch.full((z.shape[0],), -30.0)
    hi = torch.full((z.shape[0],), 30.0)
    for _ in range(80):
        mid = (lo + hi) / 2
        up = F.softmax(z * mid.exp()[:, None], dim=1).max(dim=1).values >= tau
        hi = torch.where(up, mid, hi)
        lo = torch.where(up, lo, mid)
    return hi.exp()


@torch.no_grad()
def calibrate_exits(model: ShallowDeepNet, images: torch.Tensor) -> list[str]:
    """Data-dependent init: scale each IC's linear layer (its temperature) so that, in
    order, exactly one not-yet-exited calibration image is confident enough at it.
    With random weights the shallowest IC would otherwise answer for every input (or
    none would). Returns the calibration images' exits."""
    logits = model.all_logits(images)
    remaining = torch.ones(images.shape[0], dtype=torch.bool)
    for name, z in logits[:-1]:
        s = crossing_scale(z, model.tau)
        s_rem = s[remaining].sort().values
        if len(s_rem) >= 3:
            k = math.sqrt(float(s_rem[0]) * float(s_rem[1]))  # between the two most confident
        else:
            k = float(s_rem[0]) * 0.5 if len(s_rem) else 1.0  # keep the rest for the head
        remaining &= ~(s <= k)
        ic = model.ics[int(name[2:])]
        ic.linear.weight.mul_(k)
        ic.linear.bias.mul_(k)
    return model.exits(images)


def sdn_make_model(key: str, build, n_calib: int, size: int = 256) -> nn.Module:
    def calibrate(model):
        images = random_images(torch.Generator().manual_seed(0), n_calib, size)
        return images, calibrate_exits(model, images)

    return calibrated(key, build, calibrate)


def sdn_branch_inputs(key: str, make_model) -> dict:
    """The calibration images, one per classifier that answers them (confirmed alone)."""
    model = make_model()
    images, names = extra(key)
    return pick_paths(names, images, lambda x: model.exits(x)[0])
