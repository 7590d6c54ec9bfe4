"""Show, Attend and Tell (Xu et al., ICML 2015) style image captioner: a small ResNet
encoder and an attention LSTM decoder that greedily emits words until it produces
``<end>`` or reaches ``max_len`` steps. The caption length depends on the input."""

import torch
import torch.nn.functional as F
from torch import nn

VOCAB = ["<pad>", "<start>", "<end>", "a", "dog", "cat", "on", "the", "grass", "sofa", "sits", "runs"]
WORD_MAP = {w: i for i, w in enumerate(VOCAB)}


class BasicBlock(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class TinyResNet(nn.Module):
    """Stands in for torchvision's ResNet-101 (same child order: stem, layers, pool, fc)."""

    def __init__(self, widths=(16, 32, 32)):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(2)
        self.layer1 = BasicBlock(widths[0], widths[0])
        self.layer2 = BasicBlock(widths[0], widths[1], stride=2)
        self.layer3 = BasicBlock(widths[1], widths[2], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[2], 1000)


class Encoder(nn.Module):
    def __init__(self, encoded_image_size: int = 4):
        super().__init__()
        self.enc_image_size = encoded_image_size
        resnet = TinyResNet()
        modules = list(resnet.children())[:-2]  # drop the pooling and classification layers
        self.resnet = nn.Sequential(*modules)
        self.adaptive_pool = nn.AdaptiveAvgPool2d((encoded_image_size, encoded_image_size))

    def forward(self, images):
        out = self.resnet(images)  # (batch, encoder_dim, H/8, W/8)
        out = self.adaptive_pool(out)  # (batch, encoder_dim, enc, enc)
        out = out.permute(0, 2, 3, 1)  # (batch, enc, enc, encoder_dim)
        return out


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
        attention_weighted_encoding = (encoder_out * alpha.unsqueeze(2)).sum(dim=1)  # (batch, encoder_dim)
        return attention_weighted_encoding, alpha


class DecoderWithAttention(nn.Module):
    def __init__(self, attention_dim: int, embed_dim: int, decoder_dim: int, vocab_size: int,
                 encoder_dim: int = 32, dropout: float = 0.5):
        super().__init__()
        self.encoder_dim = encoder_dim
        self.attention_dim = attention_dim
        self.embed_dim = embed_dim
        self.decoder_dim = decoder_dim
        self.vocab_size = vocab_size
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
        h = self.init_h(mean_encoder_out)
        c = self.init_c(mean_encoder_out)
        return h, c

    def step(self, prev_word, encoder_out, h, c):
        """One decoding step: scores over the vocabulary and the new LSTM state."""
        embeddings = self.embedding(prev_word).squeeze(1)  # (batch, embed_dim)
        awe, _ = self.attention(encoder_out, h)
        gate = self.sigmoid(self.f_beta(h))
        awe = gate * awe
        h, c = self.decode_step(torch.cat([embeddings, awe], dim=1), (h, c))
        scores = self.fc(self.dropout(h))
        return scores, h, c


class Captioner(nn.Module):
    def __init__(self, max_len: int = 6, emb_dim: int = 16, attention_dim: int = 16, decoder_dim: int = 32):
        super().__init__()
        self.max_len = max_len
        self.start_idx = WORD_MAP["<start>"]
        self.end_idx = WORD_MAP["<end>"]
        self.encoder = Encoder()
        self.decoder = DecoderWithAttention(attention_dim, emb_dim, decoder_dim, len(VOCAB))

    def forward(self, image):
        """Greedy decoding; returns the word indices, (1, length) with length <= max_len + 1."""
        encoder_out = self.encoder(image)  # (1, enc, enc, encoder_dim)
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


def _random_images(gen: torch.Generator, batch: int = 1) -> torch.Tensor:
    """A colour offset, white noise and a smooth pattern, each with a log-uniform scale."""
    def scale():
        return torch.empty(batch, 1, 1, 1).uniform_(-2.0, 2.5, generator=gen).exp()

    smooth = F.interpolate(torch.randn(batch, 3, 4, 4, generator=gen), size=32, mode="bilinear", align_corners=False)
    return (torch.randn(batch, 3, 1, 1, generator=gen) * scale()
            + torch.randn(batch, 3, 32, 32, generator=gen) * scale() + smooth * scale())


@torch.no_grad()
def _greedy_scores(model: Captioner, images: torch.Tensor, ban_end: bool = False) -> torch.Tensor:
    """Log-probabilities (batch, max_len, vocab) of greedy decoding, without stopping at
    <end> (or never choosing it, with ``ban_end``); plain PyTorch, batched."""
    dec = model.decoder
    enc = model.encoder(images).flatten(1, 2)
    h, c = dec.init_h(enc.mean(1)), dec.init_c(enc.mean(1))
    word = torch.full((images.shape[0],), model.start_idx)
    out = []
    for _ in range(model.max_len):
        awe, _ = dec.attention(enc, h)
        ctx = torch.sigmoid(dec.f_beta(h)) * awe
        h, c = dec.decode_step(torch.cat([dec.embedding(word), ctx], 1), (h, c))
        scores = F.log_softmax(dec.fc(h), dim=1)
        out.append(scores)
        if ban_end:
            scores = scores.clone()
            scores[:, model.end_idx] = -float("inf")
        word = scores.argmax(1)
    return torch.stack(out, 1)


@torch.no_grad()
def _calibrate_end(model: Captioner, gen: torch.Generator) -> None:
    """Data-dependent init: shift the <end> logit so that, on a random calibration batch,
    about 1 caption in max_len + 1 never ends (random decoders end at once or never)."""
    scores = _greedy_scores(model, _random_images(gen, 256), ban_end=True)
    others = scores.clone()
    others[..., model.end_idx] = -float("inf")
    margin = (scores[..., model.end_idx] - others.max(-1).values).max(1).values
    model.decoder.fc.bias[model.end_idx] -= margin.quantile(1 / (model.max_len + 1))


def make_model() -> nn.Module:
    torch.manual_seed(0)
    model = Captioner()
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.uniform_(m.bias, -0.2, 0.2)
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    model.eval()
    _calibrate_end(model, torch.Generator().manual_seed(0))
    return model


def example_inputs():
    return (torch.randn(1, 3, 32, 32),)


def caption_lengths(model: Captioner, images: torch.Tensor) -> list[str]:
    """Per image: 'endK' if <end> is the K-th emitted word, 'noend' if it never comes."""
    first_end = _greedy_scores(model, images).argmax(-1) == model.end_idx  # (batch, max_len)
    return [f"end{row.index(True) + 1}" if True in row else "noend" for row in first_end.tolist()]


def branch_inputs():
    """Inputs whose caption ends (emits <end>) after 1, 2, ..., max_len words, or never."""
    model = make_model()
    want = {f"end{k}" for k in range(1, model.max_len + 1)} | {"noend"}
    gen = torch.Generator().manual_seed(2)
    found = {}
    for _ in range(8):  # candidates are screened in batches, then confirmed one by one
        candidates = _random_images(gen, 512)
        for i, name in enumerate(caption_lengths(model, candidates)):
            if name not in found:
                x = candidates[i : i + 1].clone()
                if caption_lengths(model, x)[0] == name:
                    found[name] = (x,)
        if set(found) == want:
            break
    return found
