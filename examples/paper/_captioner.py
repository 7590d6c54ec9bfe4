"""Show, Attend and Tell style captioner (Xu et al., ICML 2015) shared by the two
paper captioners (a file starting with ``_``: not an example): an image encoder (a
torchvision-free ResNet-101 or ResNeXt-50 32x4d, without pooling and classification
layers) and an attention LSTM decoder that greedily emits words until it produces
``<end>`` or reaches ``max_len`` = 10 steps. The caption length depends on the input."""

import torch
import torch.nn.functional as F
from torch import nn

from _common import calibrated, extra, init_weights, pick_paths, random_images

VOCAB_SIZE = 1000  # <pad>, <start>, <end>, then 997 made-up words
START, END = 1, 2


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, groups: int = 1, base_width: int = 64):
        super().__init__()
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.last_bn = self.bn3
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != planes * 4:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes * 4))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision's ResNet layout (same child order: stem, layer1-4, avgpool, fc)."""

    def __init__(self, layers, groups: int = 1, width_per_group: int = 64, num_classes: int = 1000):
        super().__init__()
        self.inplanes = 64
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], 2)
        self.layer3 = self._make_layer(256, layers[2], 2)
        self.layer4 = self._make_layer(512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, num_classes)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        layers = [Bottleneck(self.inplanes, planes, stride, self.groups, self.base_width)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes, 1, self.groups, self.base_width) for _ in range(1, blocks)]
        return nn.Sequential(*layers)


class Encoder(nn.Module):
    def __init__(self, resnet: ResNet, encoded_image_size: int = 14):
        super().__init__()
        self.enc_image_size = encoded_image_size
        modules = list(resnet.children())[:-2]  # drop the pooling and classification layers
        self.resnet = nn.Sequential(*modules)
        self.adaptive_pool = nn.AdaptiveAvgPool2d((encoded_image_size, encoded_image_size))

    def forward(self, images):
        out = self.resnet(images)  # (batch, 2048, H/32, W/32)
        out = self.adaptive_pool(out)  # (batch, 2048, enc, enc)
        return out.permute(0, 2, 3, 1)  # (batch, enc, enc, 2048)


class Attention(nn.Module):
    def __init__(self, encoder_dim: int, decoder_dim: int, attention_dim: int):
        super().__init__()
        self.encoder_att = nn.Linear(encoder_dim, attention_dim)
        self.decoder_att = nn.Linear(decoder_dim, attention_dim)
        self.full_att = nn.Linear(attention_dim, 1)
        self.relu = nn.ReLU()
        self.softmax = nn.Softmax(dim=1)

    def forward(self, encoder_out, decoder_hidden):
        att1 = self.encoder_att(encoder_out)  # (batch, num_pixels, attention_dim)
        att2 = self.decoder_att(decoder_hidden)  # (batch, attention_dim)
        att = self.full_att(self.relu(att1 + att2.unsqueeze(1))).squeeze(2)  # (batch, num_pixels)
        alpha = self.softmax(att)
        return (encoder_out * alpha.unsqueeze(2)).sum(dim=1), alpha


class DecoderWithAttention(nn.Module):
    def __init__(self, attention_dim: int = 512, embed_dim: int = 512, decoder_dim: int = 512,
                 vocab_size: int = VOCAB_SIZE, encoder_dim: int = 2048, dropout: float = 0.5):
        super().__init__()
        self.attention = Attention(encoder_dim, decoder_dim, attention_dim)
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.dropout = nn.Dropout(p=dropout)
        self.decode_step = nn.LSTMCell(embed_dim + encoder_dim, decoder_dim, bias=True)
        self.init_h = nn.Linear(encoder_dim, decoder_dim)
        self.init_c = nn.Linear(encoder_dim, decoder_dim)
        self.f_beta = nn.Linear(decoder_dim, encoder_dim)  # sigmoid-activated gate on the context
        self.sigmoid = nn.Sigmoid()
        self.fc = nn.Linear(decoder_dim, vocab_size)

    def init_hidden_state(self, encoder_out):
        mean_encoder_out = encoder_out.mean(dim=1)
        return self.init_h(mean_encoder_out), self.init_c(mean_encoder_out)

    def step(self, prev_word, encoder_out, h, c):
        embeddings = self.embedding(prev_word).squeeze(1)  # (batch, embed_dim)
        awe, _ = self.attention(encoder_out, h)
        awe = self.sigmoid(self.f_beta(h)) * awe
        h, c = self.decode_step(torch.cat([embeddings, awe], dim=1), (h, c))
        return self.fc(self.dropout(h)), h, c


class Captioner(nn.Module):
    def __init__(self, resnet: ResNet, max_len: int = 10):
        super().__init__()
        self.max_len = max_len
        self.start_idx = START
        self.end_idx = END
        self.encoder = Encoder(resnet)
        self.decoder = DecoderWithAttention()

    def forward(self, image):
        """Greedy decoding; returns the word indices, (1, length) with length <= max_len + 1."""
        encoder_out = self.encoder(image)
        encoder_dim = encoder_out.size(3)
        encoder_out = encoder_out.view(1, -1, encoder_dim)  # (1, num_pixels, encoder_dim)
        h, c = self.decoder.init_hidden_state(encoder_out)
        prev_word = torch.tensor([[self.start_idx]], dtype=torch.long, device=image.device)
        seq = [prev_word]
        for _ in range(self.max_len):
            scores, h, c = self.decoder.step(prev_word, encoder_out, h, c)
            scores = F.log_softmax(scores, dim=1)
            next_word = scores.argmax(dim=1, keepdim=True)  # (1, 1)
            seq.append(next_word)
            if next_word.item() == self.end_idx:
                break
            prev_word = next_word
        return torch.cat(seq, dim=1)

    @torch.no_grad()
    def end_margins(self, images) -> torch.Tensor:
        """(batch, max_len): the <end> logit minus the best other one at each step of
        greedy decoding with <end> banned (the words chosen before a caption ends are
        the same as without the ban); plain PyTorch, batched."""
        dec = self.decoder
        enc = self.encoder(images).flatten(1, 2)
        h, c = dec.init_hidden_state(enc)
        word = torch.full((images.shape[0],), self.start_idx)
        out = []
        for _ in range(self.max_len):
            ctx = torch.sigmoid(dec.f_beta(h)) * dec.attention(enc, h)[0]
            h, c = dec.decode_step(torch.cat([dec.embedding(word), ctx], 1), (h, c))
            scores = dec.fc(h)
            others = scores.clone()
            others[:, self.end_idx] = -float("inf")
            out.append(scores[:, self.end_idx] - others.max(1).values)
            word = others.argmax(1)
        return torch.stack(out, 1)

    def caption_lengths(self, images, margins=None) -> list[str]:
        """Per image: 'endK' if <end> is the K-th emitted word, 'noend' if it never comes."""
        ends = (self.end_margins(images) if margins is None else margins) > 0
        return [f"end{row.index(True) + 1}" if True in row else "noend" for row in ends.tolist()]


def _calibrate_end(model: Captioner, n_calib: int) -> tuple:
    """Data-dependent init: shift the <end> logit's bias so that the calibration images'
    captions end after as many different numbers of words as possible (random
    decoders end at once or never)."""
    images = random_images(torch.Generator().manual_seed(0), n_calib, 256)
    margins = model.end_margins(images)
    best = (-1, 0.0)
    for cand in sorted(set((-margins).flatten().tolist())):
        shift = cand + 1e-3
        n = len(set(model.caption_lengths(images, margins + shift)))
        if n > best[0]:
            best = (n, shift)
    with torch.no_grad():
        model.decoder.fc.bias[model.end_idx] += best[1]
    return images, model.caption_lengths(images, margins + best[1])


def make_captioner(key: str, build, n_calib: int = 12) -> nn.Module:
    return calibrated(key, build, lambda m: _calibrate_end(m, n_calib))


def build(resnet_fn) -> Captioner:
    torch.manual_seed(0)
    model = Captioner(resnet_fn())
    init_weights(model, branch_gain=0.2)
    return model


def captioner_branch_inputs(key: str, make_model) -> dict:
    """The calibration images, one per caption length (confirmed alone)."""
    model = make_model()
    images, names = extra(key)
    return pick_paths(names, images, lambda x: model.caption_lengths(x)[0])
