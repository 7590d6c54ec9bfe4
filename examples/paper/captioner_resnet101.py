"""Attention-LSTM captioner with a ResNet-101 encoder (DyCL paper, model 8): greedy
decoding that stops at ``<end>`` or after 10 words. Input 1x3x256x256; encoder output
14x14x2048, attention / embedding / LSTM sizes 512, 1000 words."""

import torch
from torch import nn

from _captioner import ResNet, build, captioner_branch_inputs, make_captioner

KEY = "captioner_resnet101"


def _build():
    return build(lambda: ResNet((3, 4, 23, 3)))


def make_model() -> nn.Module:
    return make_captioner(KEY, _build)


def example_inputs():
    return [torch.randn(1, 3, 256, 256, generator=torch.Generator().manual_seed(1))]


def branch_inputs():
    """Inputs whose captions end after different numbers of words ('endK') or never ('noend')."""
    return captioner_branch_inputs(KEY, make_model)
