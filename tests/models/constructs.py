"""Small models, one Python construct each, with inputs that drive every path."""

import bisect
import collections
import contextlib
import dataclasses
import functools
import heapq
import math
import operator
import warnings
from typing import List

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn


def sign_inputs(shape=(1, 4)):
    base = torch.linspace(-1.0, 1.0, shape[-1]).reshape(shape)
    return [(base + 2.0,), (base - 2.0,), (base * 0.1,)]


class Elif(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        s = x.sum()
        if s > 1:
            y = self.fc(x)
        elif s < -1:
            y = -x
        else:
            y = x * 3
        return y + 1


class IfExpBoolOps(nn.Module):
    def forward(self, x):
        s = x.mean()
        y = x * 2 if s > 0 else x - 1
        if s > 0 and x.max() > 2.5:
            y = y + 10
        if not (s < -1 or x.min() > 0):
            y = y * -1
        return y


class Helper(nn.Module):
    def __init__(self):
        super().__init__()
        self.fcs = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.scale = 0.5

    def _block(self, x, i):
        h = self.fcs[i](x)
        return torch.tanh(h) * self.scale, h.mean()

    def forward(self, x):
        outs = []
        for i in range(3):
            x, m = self._block(x, i)
            outs.append(m)
        return x, torch.stack(outs)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            return self.fc(x)
        h = torch.relu(x)
        return h - 1


class InlinedEarlyReturn(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()

    def forward(self, x):
        return self.gate(x) * 2


class RolledLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.steps = 3

    def forward(self, x):
        for _ in range(self.steps):
            x = torch.tanh(self.fc(x)) + x
        return x


class EnumerateZip(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.b = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.use = [True, False]

    def forward(self, x):
        for i, (fa, fb) in enumerate(zip(self.a, self.b)):
            x = fa(x) if self.use[i] else fb(x)
            if x.mean() > 0:
                x = x * (i + 1)
        return x


class BreakDecode(nn.Module):
    """Greedy decoding: a list grown per step, stop when the token is END."""

    END = 0

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 4)
        self.cell = nn.GRUCell(4, 4)
        self.out = nn.Linear(4, 5)

    def forward(self, x):
        h = x
        w = torch.tensor([1])
        seq = []
        for _ in range(4):
            h = self.cell(self.emb(w), h)
            w = self.out(h).argmax(dim=1)
            seq.append(w)
            if w.item() == self.END:
                break
        return torch.cat(seq)


class Continue(nn.Module):
    def forward(self, x):
        for i in range(3):
            if x[0, i] > 0:
                continue
            x = x + i
        return x


class While(nn.Module):
    def forward(self, x):
        n = torch.zeros(())
        while x.sum() < 10:  # dycl: max_iterations=64
            x = x + 1.0
            n = n + 1
        return x, n


class WhileBreak(nn.Module):
    def forward(self, x):
        while x.max() < 5:  # dycl: max_iterations=64
            x = x.abs() * 1.5 + 0.1
            if x.sum() > 3:
                break
        return x


class RuntimeRange(nn.Module):
    def forward(self, x):
        n = int(x.abs().sum()) % 4
        y = x
        for _ in range(n):
            y = y * 2
        return y


class Scalars(nn.Module):
    def forward(self, x):
        s = x.sum().item()
        k = float(x.mean())
        if s > 0.5:
            return x * k
        return x + s


class DifferentArity(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x, x * 2
        return x - 1


class TrainingAndNone(nn.Module):
    def __init__(self, bias=None):
        super().__init__()
        self.bias = bias
        self.drop = nn.Dropout(0.5)

    def forward(self, x, scale=None):
        if self.training:
            x = self.drop(x)
        if self.bias is not None:
            x = x + self.bias
        if scale is None:
            scale = 2.0
        return F.relu(x) * scale


CASES = {
    "elif": (Elif, sign_inputs()),
    "ifexp_boolops": (IfExpBoolOps, sign_inputs() + [(torch.tensor([[3.0, 0.1, 0.1, 0.1]]),)]),
    "helper": (Helper, sign_inputs()),
    "inlined_early_return": (InlinedEarlyReturn, sign_inputs()),
    "rolled_loop": (RolledLoop, sign_inputs()),
    "enumerate_zip": (EnumerateZip, sign_inputs()),
    "break_decode": (BreakDecode, [(torch.randn(1, 4, generator=torch.Generator().manual_seed(s)) * 3,) for s in range(12)]),
    "continue": (Continue, sign_inputs() + [(torch.tensor([[1.0, -1.0, 1.0, 0.0]]),)]),
    "while": (While, sign_inputs() + [(torch.full((1, 4), 20.0),)]),
    "while_break": (WhileBreak, sign_inputs() + [(torch.full((1, 4), 0.3),), (torch.full((1, 4), 9.0),)]),
    "runtime_range": (RuntimeRange, [(torch.full((1, 4), v),) for v in (0.1, 0.3, 0.5, 0.7)]),
    "scalars": (Scalars, sign_inputs()),
    "different_arity": (DifferentArity, sign_inputs()),
    "training_none": (TrainingAndNone, sign_inputs()),
}


class PerPathShapes(nn.Module):
    """`h` reaches the head with a different shape on each path."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(2)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        if x.sum() > 0:
            h = self.pool(x.unsqueeze(0)).squeeze(0)
        else:
            h = x
        y = h * 2
        return y.sum(dim=1), y


CASES["per_path_shapes"] = (PerPathShapes, sign_inputs())


class AugAssignAliases(nn.Module):
    """`h += ...` on a tensor rebinds every name (and caller's name) bound to it, as
    torch's in-place update is seen through them."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def _bump(self, t):
        t += 1.0
        return t * 2

    def forward(self, x):
        h = self.fc(x)
        y = h
        outs = [h]
        if x.sum() > 0:
            z = self._bump(h)
        else:
            z = h - 1.0
        h *= 3.0
        return y, outs[0], z


class ListAppendInBranch(nn.Module):
    """A list grown on one path only: the other path must not see the element."""

    def forward(self, x):
        outs = [x]
        if x.sum() > 0:
            outs.append(x * 2)
        return outs


class BreakInBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        h = x
        if x.mean() > -1.5:
            for layer in self.layers:
                h = layer(h) + x
                if x.sum() > 1:
                    break
        return h


class ScalarsInTuple(nn.Module):
    """Host scalars of different types returned next to tensors."""

    def forward(self, x):
        h = x * 2
        if x.sum() > 0:
            return h, x.sum().item()
        return h, int(x.max())


class NestedScalarMerge(nn.Module):
    """An int on one nested path, a float on another: each path keeps its type."""

    def forward(self, x):
        s = x.sum().item() if x.sum() > 0.5 else (1 if x.sum() > -0.5 else 2.5)
        if x.mean() > -1.0:
            if x.max() > 1.5:
                k = 3
            else:
                k = 0.5
            x = x * k
        return x + s, s


class NestedBreaks(nn.Module):
    """Breaks from nested unrolled loops behind three-way branches: copying the code
    after each break per path would need ~800k ops (found by generated programs)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            for inner in self.layers:
                s = torch.tanh(x.sum()).item()
                if not (torch.tanh(x).mean() >= 0.0):
                    x = inner(x) * 0.5
                elif x.min() > 1.0:
                    x = layer(x) - 1.0
                elif x.min() < 0.0:
                    x = x + s
                    break
        return x if int(x.max()) < 1.0 else x + x


class NestedBreaksAppendingToAList(nn.Module):
    """`continue`/`break` on tensor tests in two nested 3-step loops, appending to a
    list: per path, 125k lines of IR and six minutes of compile; the flag alone
    would join lists of different lengths, so the host holds the list."""

    def forward(self, x):
        out = []
        for i in range(3):
            for j in range(3):
                if x[i, j] < 0:
                    continue
                if x[i, j] > 1:
                    break
                out.append(x[i, j] * (i + 1))
            if x[i].sum() > 2:
                break
        return len(out), (torch.stack(out).sum() if out else None)


class CropsByTolistCoordinates(nn.Module):
    """Slices bounded by Python ints of `boxes.tolist()` (an ROI crop): each crop's
    width is known at run time only (it ran as a region typed by the example's
    last crop, and raised for others)."""

    def forward(self, img, boxes):
        out = []
        for x0, x1 in boxes.tolist():
            crop = img[:, x0:x1]
            out.append(crop.mean().reshape(1) * (x1 - x0))
        return torch.cat(out)


class InPlaceUpdateFromAnOverlappingView(nn.Module):
    """`y[..., 1:] += y[..., :-1]`: eager reads elements its kernel already wrote (or
    raises, for a row of 5); compiled, it read the old values. Runs as Python."""

    def forward(self, x):
        y = x.clone()
        y[..., 1:] += y[..., :-1]
        z = x.clone()
        z[:, :-1] = z[:, 1:]
        return y, z


class AnyAllStopAtTheDecidingItem(nn.Module):
    """`any(...)`/`all(...)` of a generator stop at the first item that decides them:
    later items' side effects and errors never happen (all items were evaluated)."""

    def forward(self, x):
        checked = []

        def positive(row):
            checked.append(1)
            return bool(row.sum() > 0)

        found = any(positive(r) for r in x)
        if all(10 / int(r.argmax()) > 20 for r in x if r.sum() != 0):
            return found, len(checked), x * 2
        return found, len(checked), x


class TryAroundATupleIndexFromData(nn.Module):
    """`x[0, i]` with `i` read from the data, under `except IndexError`: the index
    tuple counted as a constant, so the try compiled as its body and raised."""

    def forward(self, x):
        i = int((x > 0).sum())
        try:
            v = x[0, i]
        except IndexError:
            v = x.sum()
        return v


class ReshapeBySizesFromData(nn.Module):
    """`x.reshape(n, -1)` with `n` read from the data: typed by the one stand-in it
    took (n = 1), the compiled model returned 1x3 for every n; in a try, the handler
    never ran."""

    def forward(self, x):
        n = int((x > 0).sum()) + 1
        try:
            v = x.reshape(n, -1)
        except RuntimeError:
            v = x * 0
        return v, x.reshape(-1, n) * 2


class HaltLayer(Exception):
    def __init__(self, h):
        super().__init__("halt")
        self.h = h


class RaiseCaughtInAHelper(nn.Module):
    """A helper's try/except catching what a method it calls raises: the raise went
    to the host uncaught."""

    def _cell(self, h):
        if h.max() > 1.5:
            raise HaltLayer(h)
        return h * 2

    def encode(self, x):
        try:
            out = self._cell(x)
        except HaltLayer as e:
            out = e.h - 100
        return out

    def forward(self, x):
        return self.encode(x) + 1


class TryAroundHostMath(nn.Module):
    """Handlers around host math that raises for some values (a negative root, a zero
    divisor, an integer tensor's remainder by zero): the try compiled as its body."""

    def forward(self, x):
        v = x.sum().item()
        try:
            r = math.sqrt(v)
        except ValueError:
            r = -1.0
        n = float((x > 0).sum())
        try:
            q = 1.0 / n
        except ZeroDivisionError:
            q = -1.0
        try:
            m = torch.tensor(7) % (x > 0).sum()
        except RuntimeError:
            m = torch.tensor(-1)
        return r, q, m


class ReadAfterDelOrExcept(nn.Module):
    """`del h` on one path, and `e` after `except ... as e:` (Python deletes it): the
    region handed back dycl's unbound marker, which forward returned."""

    def forward(self, x):
        h = x * 2
        if x.sum() > 0:
            del h
        e = x
        try:
            if x.max() > 2:
                raise KeyError("k")
        except KeyError as e:
            pass
        return h, e


class WalrusInAComprehension(nn.Module):
    """`[(last := ...) for ...]` binds `last` in forward (PEP 572): the region did not hand it back."""

    def forward(self, x):
        ys = [(last := x[0, i] * 2) for i in range(3)]
        return torch.stack(ys), last


class IntsBeyondAFloatsPrecision(nn.Module):
    """A host int past 2**53 compared with a float, and divided by an int: Python is
    exact (2**53 + 1 > 2.0**53), converting the int to a float first is not."""

    def forward(self, ids):
        n = ids.sum().item()
        if n == float(n):
            return ids, n / 3, n > 9007199254740992.0, n / 4
        return ids * 2, n / 3, n > 9007199254740992.0, 2.0 ** 63 > n


class _DynamicCache:
    """transformers' cache style: made in forward by a classmethod, appended to."""

    def __init__(self):
        self.key_cache = []

    def update(self, k, layer_idx):
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(k)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], k], dim=-2)
        return self.key_cache[layer_idx]

    @classmethod
    def from_legacy_cache(cls, past=None):
        cache = cls()
        if past is not None:
            for i in range(len(past)):
                cache.update(past[i], i)
        return cache


class CacheFromAClassmethod(nn.Module):
    """A class's method called by its qualified name on the host (`Cls.method`: the
    generated host imported `module.Cls` as a module)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        cache = _DynamicCache.from_legacy_cache(None)
        k = cache.update(self.fc(x), 0)
        k = cache.update(k * 2, 0)
        return k.sum(-2)


def _nms(boxes, scores, thr):
    """py-faster-rcnn's NMS loop: `keep` grows to a length only the data decides."""
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        xx1 = x1[order[1:]].clamp(min=x1[i])
        yy1 = y1[order[1:]].clamp(min=y1[i])
        xx2 = x2[order[1:]].clamp(max=x2[i])
        yy2 = y2[order[1:]].clamp(max=y2[i])
        inter = (xx2 - xx1).clamp(min=0) * (yy2 - yy1).clamp(min=0)
        ovr = inter / (areas[i] + areas[order[1:]] - inter)
        order = order[(ovr <= thr).nonzero().squeeze(1) + 1]
    return torch.LongTensor(keep)


class NmsAfterAThreshold(nn.Module):
    """Compiled on one box: the list NMS keeps (a held list) reached Python as two
    elements, so the code after it was compiled for two kept boxes."""

    def forward(self, boxes, scores):
        keep = scores > 0.3
        boxes, scores = boxes[keep], scores[keep]
        if boxes.shape[0] == 0:
            return boxes, scores
        k = _nms(boxes, scores, 0.5)
        return boxes[k], scores[k]


def _boxes(n, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 10
    return torch.cat([xy, xy + torch.rand(n, 2, generator=g) * 5 + 0.5], 1)


class SequenceLengthFromShapes(nn.Module):
    """Llama attention's `kv_seq_len = key_states.shape[-2]; kv_seq_len += ...`: an int
    from a shape, no view of the tensor (its `+=` was refused as an in-place update)."""

    def __init__(self):
        super().__init__()
        self.k = nn.Linear(8, 8)

    def forward(self, h, past_key=None):
        key_states = self.k(h).view(h.shape[0], h.shape[1], 2, 4).transpose(1, 2)
        kv_seq_len = key_states.shape[-2]
        if past_key is not None:
            kv_seq_len += past_key.shape[-2]
        return key_states * kv_seq_len


class _Residual(nn.Sequential):
    """A Sequential whose class has its own forward (it is not the chain of its members)."""

    def forward(self, x):
        return x + super().forward(x)


class SlicedLayersAndClassHelpers(nn.Module):
    """`self.blocks[:n]` of a ModuleList and `self.features[1:](x)` of a Sequential,
    `self.__class__.helper(...)` as `type(self).helper(...)`, a Sequential subclass
    with its own forward."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])
        self.features = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
        self.residual = _Residual(nn.Linear(4, 4), nn.ReLU())
        self.n = 2

    @staticmethod
    def act(x):
        return torch.relu(x) - 0.1

    def forward(self, x):
        for block in self.blocks[:self.n]:
            x = block(x)
        for block in self.blocks[self.n:]:
            if x.sum() > 0:
                x = block(x)
        x = self.features[1:](x) + len(self.blocks[1:3])
        return self.residual(self.__class__.act(x))


class UnpackingAListComprehension(nn.Module):
    """`x0, x1 = [int(v) for v in box.tolist()]`: a list only the run time knows the
    length of, unpacked (an internal error sent forward to Python)."""

    def forward(self, x, box):
        x0, x1 = [int(v) for v in box.tolist()]
        return x[x0:x1] * 2


class SetOfValuesThenATensor(nn.Module):
    """A set comprehension (a region) read by the next region: the set its
    compile-time run made must not fix the tensor's length."""

    def forward(self, x):
        big = {round(v) for v in x.tolist() if v > 5.0}
        ids = torch.tensor(sorted(big), dtype=torch.long)
        return ids * 2


def _same_padding(x, k, s, d):
    if isinstance(x, torch.Tensor):
        return torch.clamp(((x / s).ceil() - 1) * s + (k - 1) * d + 1 - x, min=0)
    return max((math.ceil(x / s) - 1) * s + (k - 1) * d + 1 - x, 0)


class PadSame(nn.Module):
    """timm's Conv2dSame: padding from `x.size()[-2:]` through math.ceil (the sizes
    went to the sub-DNN as run-time ints, whose torch.export file did not load back)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, 2)

    def forward(self, x):
        ih, iw = x.size()[-2:]
        pad_h, pad_w = _same_padding(ih, 3, 2, 1), _same_padding(iw, 3, 2, 1)
        x = F.pad(x, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2))
        return self.conv(x), x.size(-1), x.dim()


class FeaturesByNumber(nn.Module):
    """torchvision's FPN: `OrderedDict` of features keyed "0", "1" (came back a plain
    dict), reordered by a region (`move_to_end` raised on the dict it was handed)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        names = ["0", "1"]
        results = [self.conv(x), x]
        out = collections.OrderedDict([(k, v) for k, v in zip(names, results)])
        moved = collections.OrderedDict([("0", x), ("1", x + 1)])
        moved.move_to_end("0")
        return out, moved


class InPlaceAliasInLoop(nn.Module):
    """`h -= e` in a counted loop while `x` is the same tensor: x sees every update
    (a rolled loop's block argument for `h` alone lost that: a silent wrong answer)."""

    def forward(self, x):
        h = x
        for i in range(3):
            h -= torch.tanh(x) * h
        return torch.relu(x), h


class WhileAtMostOnce(nn.Module):
    """A while body that always breaks or returns is an `if`: `t` may change type."""

    def forward(self, x):
        t = 2
        k = 0
        while k < 3 and x.mean() < 0.5:  # dycl: max_iterations=3
            k += 1
            if x.mean() >= 0.0:
                return x + t
            t -= float(x.max() > -2.0)
            break
        return x * t


class EarlyExitMethod(nn.Module):
    """An early-exit method (`return` inside its layer loop) called from a two-line forward."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.exits = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])

    def run(self, x, threshold=0.05):
        for i, layer in enumerate(self.layers):
            x = torch.tanh(layer(x))
            for j in range(2):
                if x.mean() > threshold + 0.1 * j:
                    return self.exits[i](x), i
        return self.exits[-1](x), -1

    def forward(self, x):
        logits, depth = self.run(x)
        return logits * 2, depth


CASES["early_exit_method"] = (
    EarlyExitMethod,
    [(torch.randn(1, 4, generator=torch.Generator().manual_seed(s)) * 2,) for s in range(16)],
)
class UnboundedWhile(nn.Module):
    """A data-dependent `while` with no bound: a host loop, as long as eager's."""

    def forward(self, x):
        steps = 0
        while x.sum() > 0:
            x = x - 0.5
            steps += 1
        return x, steps


CASES["unbounded_while"] = (UnboundedWhile, sign_inputs() + [(torch.full((1, 4), 3.0),)])
CASES["aug_assign_aliases"] = (AugAssignAliases, sign_inputs())
CASES["list_append_in_branch"] = (ListAppendInBranch, sign_inputs())
CASES["break_in_branch"] = (BreakInBranch, sign_inputs())
CASES["scalars_in_tuple"] = (ScalarsInTuple, sign_inputs())
CASES["nested_scalar_merge"] = (NestedScalarMerge, sign_inputs())
CASES["inplace_alias_in_loop"] = (InPlaceAliasInLoop, sign_inputs())
CASES["while_at_most_once"] = (WhileAtMostOnce, sign_inputs() + [(torch.full((1, 4), 0.2),)])
CASES["nested_breaks_appending_to_a_list"] = (NestedBreaksAppendingToAList, [
    (torch.zeros(3, 3),), (torch.tensor([[0.5, -1, 2], [1.0, 1.0, 1.0], [0.1, 0.2, 0.3]]),), (-torch.ones(3, 3),),
    (torch.tensor([[2.0, 0, 0], [0.5, 0.5, 0.5], [0, 0, 0]]),), (torch.tensor([[0.9, 0.9, 0.9], [-1, 2, 0], [1, 1, 1.0]]),)])
CASES["crops_by_tolist_coordinates"] = (CropsByTolistCoordinates, [
    (torch.arange(12.0).reshape(2, 6), torch.tensor(b)) for b in
    ([[1, 2], [0, 6]], [[0, 6], [1, 2]], [[3, 3], [-2, 6]], [[4, 1], [0, 9]], [[-5, -1], [2, 4]])])
CASES["in_place_update_from_an_overlapping_view"] = (InPlaceUpdateFromAnOverlappingView, [
    (torch.arange(8.0).reshape(2, 4),), (torch.ones(2, 4),), (torch.arange(64.0).reshape(2, 32),), (torch.ones(1, 5),)])
CASES["any_all_stop_at_the_deciding_item"] = (AnyAllStopAtTheDecidingItem, [
    (torch.tensor([[0.0, 1.0], [1.0, 0.0]]),), (torch.tensor([[-1.0, -1.0], [0.0, 1.0]]),),
    (torch.tensor([[1.0, 0.0], [0.0, 1.0]]),), (torch.tensor([[0.0, 0.0], [-2.0, -1.0]]),)])
CASES["try_around_a_tuple_index_from_data"] = (TryAroundATupleIndexFromData, [
    (torch.tensor([[1.0, -1.0]]),), (torch.ones(1, 2),), (-torch.ones(1, 2),)])
CASES["reshape_by_sizes_from_data"] = (ReshapeBySizesFromData, [
    (torch.tensor([[1.0, 1.0, -1.0]]),), (torch.tensor([[1.0, -1.0, -1.0]]),), (torch.ones(1, 3),),
    (-torch.ones(1, 3),)])
CASES["raise_caught_in_a_helper"] = (RaiseCaughtInAHelper, [(torch.zeros(1, 2),), (torch.full((1, 2), 2.0),)])
CASES["try_around_host_math"] = (TryAroundHostMath, [
    (torch.tensor([[1.0, -1.0, 3.0]]),), (-torch.ones(1, 3),), (torch.ones(1, 3),)])
CASES["read_after_del_or_except"] = (ReadAfterDelOrExcept, [
    (-torch.ones(1, 3),), (torch.ones(1, 3),), (torch.tensor([[-5.0, 0.0, 3.0]]),)])
CASES["walrus_in_a_comprehension"] = (WalrusInAComprehension, [(torch.tensor([[1.0, -1.0, 1.0]]),), (-torch.ones(1, 3),)])
CASES["ints_beyond_a_floats_precision"] = (IntsBeyondAFloatsPrecision, [
    (torch.tensor([2 ** 53, 1]),), (torch.tensor([3, 4]),), (torch.tensor([2 ** 60, 6]),),
    (torch.tensor([2 ** 62, 2 ** 62 - 1]),), (torch.tensor([-2 ** 62, -2 ** 62]),)])
CASES["cache_from_a_classmethod"] = (CacheFromAClassmethod, [(torch.randn(1, 2, 3),)])
CASES["nms_after_a_threshold"] = (NmsAfterAThreshold, [
    (_boxes(1, 0), torch.tensor([0.9])), (_boxes(1, 0), torch.tensor([0.1])),
    (_boxes(6, 1), torch.rand(6, generator=torch.Generator().manual_seed(2)))])
CASES["sequence_length_from_shapes"] = (SequenceLengthFromShapes, [(torch.randn(1, 3, 8), torch.randn(1, 2, 5, 4))])
CASES["sliced_layers_and_class_helpers"] = (SlicedLayersAndClassHelpers, [
    (torch.ones(1, 4),), (-torch.ones(1, 4),), (torch.randn(1, 4, generator=torch.Generator().manual_seed(3)),)])
CASES["unpacking_a_list_comprehension"] = (UnpackingAListComprehension, [
    (torch.arange(10.0), torch.tensor([2.0, 5.0])), (torch.arange(10.0), torch.tensor([0.0, 9.0])),
    (torch.arange(10.0), torch.tensor([1.0, 2.0, 3.0]))])
CASES["set_of_values_then_a_tensor"] = (SetOfValuesThenATensor, [
    (torch.arange(8.0) - 4,), (torch.arange(8.0) * 3,), (torch.full((8,), 7.0),)])
CASES["pad_same"] = (PadSame, [(torch.randn(1, 3, 9, 9),), (torch.randn(1, 3, 9, 9) * 3,)])
CASES["features_by_number"] = (FeaturesByNumber, [(torch.randn(1, 3, 4, 4),)])
CASES["nested_breaks"] = (
    NestedBreaks,
    [(torch.randn(1, 4, generator=torch.Generator().manual_seed(s)) * 2 + 0.5,) for s in range(16)],
)


class HostIntIndex(nn.Module):
    """Indexing with a run-time Python int (negative on one path), as a router picks
    its expert's probability; the index stays a tensor inside the sub-DNN."""

    def forward(self, x):
        i = int(x.sum() > 0) - 2
        j = int(x.argmax())
        return x[0, i] * 2 + x[:, j]


CASES["host_int_index"] = (HostIntIndex, sign_inputs())


class BoolArithmetic(nn.Module):
    """Masks in arithmetic: bool tensors promote to the other operand's type."""

    def forward(self, x):
        k = x.argmax(dim=1)
        return x * (x > 0) + (x < 0) * 2, k + (k < 2) * 4


CASES["bool_arithmetic"] = (BoolArithmetic, sign_inputs() + [(torch.tensor([[3.0, 0.0, 0.0, 0.0]]),)])


class HelperFallsOffTheEnd(nn.Module):
    """A helper returns a tensor on some paths and, by falling off its end, None on others."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def pick(self, h):
        s = h.sum()
        if s > 1:
            return h * 2
        elif s < -1:
            return h - 1

    def forward(self, x):
        h = self.fc(x)
        y = self.pick(h)
        if y is None:
            y = -h
        return y


CASES["helper_falls_off_the_end"] = (HelperFallsOffTheEnd, [(torch.full((1, 4), v),) for v in (3.0, -3.0, 0.0)])



class NoGradBlocks(nn.Module):
    """`with torch.no_grad()` / `torch.inference_mode()` / nullcontext around compiled code, a return inside."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        with torch.no_grad():
            h = self.fc(x)
        with torch.inference_mode(), contextlib.nullcontext(h) as same:
            if same.sum() > 0:
                return same * 2
        with torch.autograd.profiler.record_function("tail"):
            return h - 1


CASES["no_grad_blocks"] = (NoGradBlocks, sign_inputs())


class LayerDictConfig(nn.Module):
    """A dict of layers named with str.format, a config dict, `in` on both, dict literals and comprehensions."""

    def __init__(self):
        super().__init__()
        self.cfg = {"groups": 2, "blocks": [2, 1], "act": "relu"}
        self.layers = nn.ModuleDict()
        for g in range(self.cfg["groups"]):
            for i in range(self.cfg["blocks"][g]):
                self.layers["group{}_ds{}".format(g, i)] = nn.Linear(4, 4)
        self.word_map = {"<start>": 0, "<end>": 3}

    def forward(self, x):
        acts = {"relu": F.relu, "tanh": torch.tanh}
        feats = {}
        for g in range(self.cfg["groups"]):
            for i in range(2):
                key = "group{}_ds{}".format(g, i)
                if key in self.layers:
                    x = acts[self.cfg["act"]](self.layers[key](x)) if x.mean() > 0 else self.layers[key](x)
                    feats[key] = x
        norms = {k: v.norm() for k, v in feats.items() if "ds0" in k}
        end = self.word_map["<end>"]
        return x[:, end], sum(norms.values()), {"logits": x, "depth": len(feats)}


CASES["layer_dict_config"] = (LayerDictConfig, sign_inputs())


class Comprehensions(nn.Module):
    """List comprehensions over layers, generator expressions in sum/any/all, iteration over x.shape and rows."""

    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])

    def forward(self, x):
        outs = [head(x) for head in self.heads]
        best = outs[0] if outs[0].sum() > outs[1].sum() else outs[1]
        numel = 1
        for d in x.shape:
            numel *= d
        rows = [r.max() for r in x]
        if any(r > 1 for r in rows) and all(o.abs().sum() > 0 for o in outs):
            best = best + sum(o.mean() for o in outs)
        return best / numel, torch.stack(list(reversed(rows))), tuple(o.shape for o in outs)


CASES["comprehensions"] = (Comprehensions, [(x[0].reshape(2, 2),) for x in sign_inputs()])


class ClosuresAndLambdas(nn.Module):
    """Nested functions and lambdas closing over locals and self; torch.cond with local branches."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        scale = 3.0

        def block(t, bias=1.0):
            return self.fc(t) * scale + bias

        shift = lambda t, k=2: t - k  # noqa: E731
        scale = 0.5  # read when block is called, as Python does

        def neg(t):
            return -t

        def keep(t):
            return t * 1.0

        y = block(x) if x.sum() > 0 else shift(x)
        return torch.cond(y.mean() > 0, neg, keep, (y,))


CASES["closures_and_lambdas"] = (ClosuresAndLambdas, sign_inputs())


class StaticAndClassMethods(nn.Module):
    """@staticmethod and @classmethod helpers, *args / **kwargs at call sites and in helpers."""

    factor = 2.0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @staticmethod
    def act(t):
        return torch.relu(t) + 1

    @classmethod
    def double(cls, t):
        return t * cls.factor

    def combine(self, *parts, scale=1.0, **extra):
        out = parts[0]
        for p in parts[1:]:
            out = out + p
        return out * scale + extra.get("shift", 0.0)

    def forward(self, x):
        pair = (self.fc(x), x)
        opts = dict(scale=0.5, shift=1.0)
        h = self.combine(*pair, **opts)
        return self.act(h) if h.sum() > 0 else self.double(h)


CASES["static_and_class_methods"] = (StaticAndClassMethods, sign_inputs())


class TryAroundReturn(nn.Module):
    """try/except around code that cannot fail for these shapes, including a return; try/finally."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        try:
            h = self.fc(x)
        except RuntimeError:
            h = x
        finally:
            h = h * 1.5
        if h.mean() > 0:
            try:
                return self.head(h)
            except (RuntimeError, ValueError):
                return None
        return h


CASES["try_around_return"] = (TryAroundReturn, sign_inputs())


class WhileTrueBreak(nn.Module):
    """`while True` with a data-dependent break and a counter."""

    def forward(self, x):
        steps = 0
        while True:
            x = x * 0.5
            steps += 1
            if x.abs().max() < 0.2 or steps >= 6:
                break
        return x, steps


CASES["while_true_break"] = (WhileTrueBreak, sign_inputs())


class NamedResults(nn.Module):
    """torch.return_types results read by field name; results keep eager's Python types."""

    def forward(self, x):
        m = x.max(dim=1)
        top = torch.topk(x, 2)
        if m.values.sum() > 0:
            return m, top.indices, x.shape
        return x.min(1), top.values, x.size()


CASES["named_results"] = (NamedResults, sign_inputs())



class HostChecks(nn.Module):
    """`assert` and `raise` on run-time values, also in a helper: the compiled model raises as eager does."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def check(self, h):
        if h.abs().max() > 4:
            raise ValueError("activation too large", 4)
        return h * 2

    def forward(self, x):
        assert x.sum() < 30, "input sum too big"
        h = self.check(self.fc(x))
        if h.mean() < -1:
            raise RuntimeError
        return h


CASES["host_checks"] = (HostChecks, sign_inputs() + [(torch.full((1, 4), 9.0),), (torch.full((1, 4), 5.0),),
                                                     (torch.full((1, 4), -0.5),)])



class OperandsOfAndOr(nn.Module):
    """`a and b` / `a or b` as values are operands (tensors), not truth values; an LSTM's
    `flatten_parameters()` is a leaf module's method that changes no result."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 4, batch_first=True)

    def forward(self, x, state=None):
        self.rnn.flatten_parameters()
        out, _ = self.rnn(x.unsqueeze(0), state)
        gate = (x.sum() > 0) and x * 2
        fallback = x.mean() or out.squeeze(0)
        return gate, fallback, state or "no state"


CASES["operands_of_and_or"] = (OperandsOfAndOr, sign_inputs() + [(torch.zeros(1, 4),)])



class ExitNow(Exception):
    """An early exit carrying tensors, as early-exit encoders raise it."""

    def __init__(self, outputs, layer_index):
        super().__init__("exit")
        self.outputs = outputs
        self.layer_index = layer_index


class ExitingEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])
        self.exits = nn.ModuleList([nn.Linear(4, 2) for _ in range(4)])
        self.thresholds = (0.75, 0.56, 0.6, 0.99)

    def run_layer(self, h, i):
        h = torch.tanh(self.layers[i](h))
        logits = self.exits[i](h)
        if torch.softmax(logits, -1).max() > self.thresholds[i]:
            raise ExitNow(logits, i)
        return h

    def forward(self, x):
        h = x
        for i in range(len(self.layers)):
            h = self.run_layer(h, i)
        return self.exits[-1](h)


class ExceptionExit(nn.Module):
    """A custom exception raised two calls deep, caught by forward: a structured early exit."""

    def __init__(self):
        super().__init__()
        self.encoder = ExitingEncoder()
        self.stem = nn.Linear(4, 4)

    def forward(self, x):
        h = self.stem(x)
        exit_layer = -1
        try:
            out = self.encoder(h)
        except ExitNow as e:
            out = e.outputs
            exit_layer = e.layer_index
        return out, exit_layer


# Exits after layers 0, 1, 2 and none (-1).
CASES["exception_exit"] = (ExceptionExit, [(torch.randn(1, 4, generator=torch.Generator().manual_seed(k)) * s,)
                                           for k, s in ((6, 3.0), (0, 3.0), (0, 0.1), (1, 3.0), (3, 1.0))])


class ForElse(nn.Module):
    """`for ... else` (the else runs when no iteration breaks) and `while ... else`."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        found = -1
        for i, blk in enumerate(self.blocks):
            x = torch.tanh(blk(x))
            if x.sum() > 1.5:
                found = i
                break
        else:
            x = x * 0
        steps = 0
        while steps < 2:
            steps += 1
        else:
            x = x + steps
        return x, found


CASES["for_else"] = (ForElse, sign_inputs() + [(torch.full((1, 4), 5.0),), (torch.full((1, 4), -5.0),)])



Heads = collections.namedtuple("Heads", ["logits", "hidden"])


@dataclasses.dataclass
class SegOutput:
    out: torch.Tensor
    aux: torch.Tensor = None


class PythonObjects(nn.Module):
    """Outputs as published code returns them: a namedtuple, a dataclass, an OrderedDict
    filled key by key, a dict over a ModuleDict's items; max() over tensors; lambdas made
    in a comprehension (late binding: each sees the last loop value)."""

    def __init__(self):
        super().__init__()
        self.branches = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})

    def forward(self, x):
        feats = {name: m(x) for name, m in self.branches.items()}
        result = collections.OrderedDict()
        result["out"] = feats["a"].relu()
        if x.sum() > 0:
            result["aux"] = feats["b"]
        scales = [lambda t: t * k for k in range(1, 4)]
        best = max(v.max() for v in feats.values())
        heads = Heads(logits=scales[0](feats["a"]), hidden=x)
        seg = SegOutput(out=heads.logits + best)
        if best > 0.5:
            seg.aux = heads.hidden
        return heads, seg, result


CASES["python_objects"] = (PythonObjects, sign_inputs() + [(torch.full((1, 4), 0.1),)])



class InPlaceMethods(nn.Module):
    """In-place tensor methods compiled as updates of every name holding the tensor:
    chained, in a branch, in a conditional expression, in a loop; copy_/zero_/fill_."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        same = h
        h.mul_(2).add_(1)
        if h.sum() > 0:
            h.clamp_(min=0)
        z = torch.empty(1, 4)
        z.copy_(x * 3)
        z.zero_() if z.mean() > 5 else z.fill_(2.0)
        for i in range(3):
            h.add_(i)
        return same, h, z


CASES["in_place_methods"] = (InPlaceMethods, sign_inputs())


class GrowingListWhile(nn.Module):
    """A `while` whose body grows a Python list (greedy decoders): unrolled per path,
    as far as the list's length ends it; a `continue` skips an append."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        outs, h, steps = [], x, 0
        while len(outs) < 5:
            h = torch.tanh(self.fc(h) + h)
            steps += 1
            if steps == 2:
                continue
            outs.append(h * steps)
            if h.sum() > 0.6 or steps > 6:
                break
        return torch.cat(outs, 0), len(outs)


CASES["growing_list_while"] = (GrowingListWhile, sign_inputs() + [(torch.full((1, 4), v),) for v in (0.3, -0.4, 1.0)])


class AttentionMaskHelpers(nn.Module):
    """A model library's extended attention mask: the mask cast to the hidden
    states' dtype and scaled by `torch.finfo(dtype).min`; `iinfo` and `.bits` too."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def get_extended_attention_mask(self, attention_mask, dtype):
        extended = attention_mask[:, None, :].to(dtype=dtype)
        return (1.0 - extended) * torch.finfo(dtype).min

    def forward(self, x):
        h = self.fc(x)
        mask = (x > 0).long()
        scores = h + self.get_extended_attention_mask(mask, h.dtype).squeeze(1)
        if torch.finfo(h.dtype).bits == 32 and scores.max() > torch.finfo(h.dtype).min / 2:
            return scores.softmax(-1), torch.iinfo(torch.int32).max
        return scores, 0


CASES["attention_mask_helpers"] = (AttentionMaskHelpers, sign_inputs())


class AugmentedItemAssign(nn.Module):
    """`z[i] += v`, `z[:, j] *= 2`, `z[mask] -= v`: read, update, write back."""

    def forward(self, x):
        z = torch.zeros(3, 4)
        z[0] += x[0]
        z[:, 1] *= 2
        z[:, 2] += 1.5
        z[z.sum(-1) > 0.5] -= x[0, 0]
        return z * x.sum()


CASES["augmented_item_assign"] = (AugmentedItemAssign, sign_inputs())


class ModulesMadeInForward(nn.Module):
    """Old HF BERT's `nn.Softmax(dim=-1)(scores)`: stateless torch.nn modules created
    and called in forward (a Python region before), one held in a name, one in place."""

    def forward(self, x):
        p = nn.Softmax(dim=-1)(x * 3)
        act = nn.LeakyReLU(0.2)
        y = x.clone()
        nn.ReLU(inplace=True)(y)
        if p.max() > 0.5:
            return act(x) + nn.Flatten(0)(p)[:1], y
        return nn.GELU(approximate="tanh")(x) - nn.Identity()(p), nn.Hardtanh(-0.1, 0.1)(y)


CASES["modules_made_in_forward"] = (ModulesMadeInForward, sign_inputs() + [(torch.full((1, 4), 0.1),)])


class GrowingTensorWhile(nn.Module):
    """Greedy decoding's `ids = torch.cat([ids, nxt], 1)` in a loop the data ends:
    the carried tensor grows (0, 2 or 5 steps here), so it is carried as `1x?`."""

    def forward(self, x):
        out = x[:, :1]
        while out.abs().sum() < 3:
            out = torch.cat([out, out[:, -1:] * 1.5 + 0.2], 1)
        return out, out.size(1)


CASES["growing_tensor_while"] = (GrowingTensorWhile, sign_inputs())


class MethodsAsValues(nn.Module):
    """Bound methods and modules as values: a name for a method, `functools.partial`
    over one, a list of layers iterated."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(4, 4)
        self.l2 = nn.Linear(4, 4)

    def block(self, x, scale):
        return torch.tanh(self.l1(x)) * scale

    def forward(self, x):
        f = self.block
        y = f(x, 2.0)
        g = functools.partial(self.block, scale=0.5)
        z = functools.partial(g)(y)
        for fn in [self.l2, self.l1]:
            if z.mean() > 0:
                z = fn(z)
        return z


CASES["methods_as_values"] = (MethodsAsValues, sign_inputs() + [(torch.full((1, 4), v),) for v in (2.0, -2.0)])

class TreeRecursion(nn.Module):
    """A TreeLSTM-style recursive helper over a parse tree given as nested tuples:
    inlined, the tree is known at compile time; a branch on the data at each node."""

    def __init__(self, tree=((0, 1), (2, (1, 0)))):
        super().__init__()
        self.tree = tree
        self.leaf = nn.Linear(4, 4)
        self.combine = nn.Linear(8, 4)

    def node(self, tree, emb):
        if isinstance(tree, int):
            return torch.tanh(self.leaf(emb[tree].unsqueeze(0)))
        left, right = (self.node(t, emb) for t in tree)
        h = torch.tanh(self.combine(torch.cat([left, right], 1)))
        return h if h.sum() > 0 else h + left

    def forward(self, emb):
        return self.node(self.tree, emb)


CASES["tree_recursion"] = (TreeRecursion, [(x[0].reshape(2, 2).repeat(2, 2)[:3],) for x in sign_inputs()])

class ModelOutput(collections.OrderedDict):
    """transformers' ModelOutput as published: a dataclass that is also an ordered dict
    of its fields that are not None; `out[0]` indexes that tuple, `out["k"]` the dict."""

    def __post_init__(self):
        class_fields = dataclasses.fields(self)
        first_field = getattr(self, class_fields[0].name)
        other_fields_are_none = all(getattr(self, field.name) is None for field in class_fields[1:])
        if other_fields_are_none and not torch.is_tensor(first_field) and isinstance(first_field, dict):
            for key, value in first_field.items():
                self[key] = value
        else:
            for field in class_fields:
                v = getattr(self, field.name)
                if v is not None:
                    self[field.name] = v

    def __getitem__(self, k):
        if isinstance(k, str):
            inner_dict = dict(self.items())
            return inner_dict[k]
        return self.to_tuple()[k]

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclasses.dataclass
class EncoderOutput(ModelOutput):
    last_hidden_state: torch.Tensor = None
    hidden_states: tuple = None
    attentions: tuple = None


class HFStyleOutputs(nn.Module):
    """An encoder returning a ModelOutput read every way published heads read one:
    by attribute, by key, by position and slice, `in`, `len`, `to_tuple()`."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.head = nn.Linear(4, 2)

    def encode(self, x, output_hidden_states=True, return_dict=True):
        all_hidden_states = () if output_hidden_states else None
        for layer in self.layers:
            if output_hidden_states:
                all_hidden_states = all_hidden_states + (x,)
            x = torch.tanh(layer(x))
        if not return_dict:
            return tuple(v for v in [x, all_hidden_states] if v is not None)
        return EncoderOutput(last_hidden_state=x, hidden_states=all_hidden_states)

    def forward(self, x):
        outputs = self.encode(x)
        sequence_output = outputs[0]
        if outputs.hidden_states[-1].mean() > 0 and "attentions" not in outputs:
            logits = self.head(sequence_output + outputs["last_hidden_state"])
            return (logits,) + outputs[1:] + (len(outputs),)
        if sequence_output.sum() < -0.5:
            return self.head(self.encode(x, return_dict=False)[0]), outputs.to_tuple()
        return outputs


CASES["hf_style_outputs"] = (HFStyleOutputs, sign_inputs() + [  # the three paths
    (torch.tensor([[4.62, -0.88, -6.54, 1.71]]),), (torch.tensor([[-1.70, 1.12, -2.68, -4.53]]),),
    (torch.tensor([[0.98, -4.33, -4.15, -2.40]]),)])


class SeenTokensSet(nn.Module):
    """Tokens seen so far kept in a Python set: `seen.add(t)` in a compiled loop is
    an update, never dropped as unused (a tensor's `add` is pure; a set's is not),
    and `t in seen` decides the exit."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        seen = set()
        outs = []
        for _ in range(5):
            x = self.fc(x).tanh() * 3
            t = int(x.argmax())
            if t in seen:
                break
            seen.add(t)
            outs.append(x)
        return torch.cat(outs), len(seen), sorted(seen)


CASES["seen_tokens_set"] = (SeenTokensSet, [(torch.randn(1, 4, generator=torch.Generator().manual_seed(k)) * 2,)
                                            for k in range(8)])


class StarredDisplays(nn.Module):
    """`(*xs, y)`, `[*a, *b]`, `(*x.shape[:-1], 2, 2)`: starred items in tuple and list
    displays, of compile-time sequences and of a tensor's rows."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        outs = ()
        for layer in self.layers:
            x = layer(x)
            outs = (*outs, x)
        both = [*outs, *[x * 2]]
        shape = (*x.shape[:-1], 2, 2)
        rows = (*x.reshape(2, 2), x.sum())
        if x.sum() > 0:
            both = [*both, -x]
        return torch.cat(both), x.reshape(shape), rows[0] + rows[1] * rows[2], len(both)


CASES["starred_displays"] = (StarredDisplays, sign_inputs())


class NoneOnSomePaths(nn.Module):
    """`is None` on values that are None on some paths only: a helper returning
    `(1, y)` or `(None, None)`, a helper's early return in a loop falling through to
    `return None, None`, a loop-carried `found = None` set under a condition. The
    example takes the not-None paths; `is None` must still be a run-time test."""

    def pick(self, x):
        if x.sum() > 0:
            return 1, x * 2
        return None, None

    def find(self, x):
        for i in range(4):
            if x[0, i] < -1.5:
                return i, x[:, i]
        return None, None

    def forward(self, x):
        k, y = self.pick(x)
        a = (x - 1, 0) if k is None else (y, k)
        i, v = self.find(x)
        b = -x if i is None else v * i
        found = None
        for j in range(4):
            if x[0, j] > 2.5:
                found = x[:, j]
        c = found if found is not None else x.sum(1)
        return a, b, c


CASES["none_on_some_paths"] = (NoneOnSomePaths, [(torch.tensor([[3.0, -2.0, 1.0, 0.5]]),)] + sign_inputs())


class NextWithDefault(nn.Module):
    """`next((i for i in ... if <data>), None)` then `if first is None`: the region's
    result is an int on the compile's runs and None on other inputs."""

    def forward(self, x):
        first = next((i for i in range(4) if x[0, i] > 0), None)
        if first is None:
            return x, None
        return x[:, first], first


CASES["next_with_default"] = (NextWithDefault, sign_inputs() + [(-torch.ones(1, 4),)])


class LocalListMutations(nn.Module):
    """A list made by `list(range(n))` is the function's own: sorted, reversed and
    appended to (under a data-dependent test) as Python changes it."""

    def forward(self, x):
        idx = list(range(4))
        idx.sort(reverse=True)
        keep = list(range(2))
        if x.sum() > 0:
            keep.append(3)
        return x[:, idx], idx, x[:, keep], keep


CASES["local_list_mutations"] = (LocalListMutations, sign_inputs())


def _fill_if_positive(d, x):
    if x.mean() > 0:
        d["m"] = x.mean()


class HelperFillsCallersDict(nn.Module):
    """Helpers that change the caller's dict on some paths only (a module-level
    function, and a method setting `d[i]` in a loop): the caller sees the changes."""

    def fill(self, d, x):
        for i in range(4):
            if x[0, i] > 0:
                d[i] = x[:, i]

    def forward(self, x):
        d = {"a": x}
        _fill_if_positive(d, x)
        e = {}
        self.fill(e, x)
        return list(d), sorted(e), len(e)


CASES["helper_fills_callers_dict"] = (HelperFillsCallersDict, sign_inputs())


class TryIndexByData(nn.Module):
    """`try: y = l[k]` with k read from the data, `except IndexError`: the handler
    runs where the index is out of range, as in eager."""

    def forward(self, x):
        items = [x * 1, x * 2]
        k = int((x > 0).sum())
        try:
            y = items[k]
        except IndexError:
            y = x * -1
        return y


CASES["try_index_by_data"] = (TryIndexByData, sign_inputs() + [(torch.tensor([[-1.0, 0.5, -2.0, -3.0]]),)])


class SlicesWithRunTimeBounds(nn.Module):
    """Slices whose bounds only the run time knows: `x[i:i + 1]` over
    `range(x.size(0))`, a window `x[max(0, i - 2):i + 1]`, `x[i:]` in a while loop
    stepping by 2, `x[n:n + 2]` with n read from the data, and rows grown with
    torch.cat. Each length depends on the bounds (typed from two stand-ins, they
    were constants: `x[n:n + 1].numel()` was 0, the window means were inf)."""

    def forward(self, x):
        n = 0
        means = []
        for i in range(x.size(0)):
            n += x[i:i + 1].numel()
            win = x[max(0, i - 2):i + 1]
            means.append(win.sum(0) / win.shape[0])
        j, rows = 0, 0
        while j < x.size(0):
            rows += x[j:].size(0)
            j += 2
        k = int((x > 0).sum())
        tail = x[k:k + 2]
        out = x[:1]
        for i in range(1, x.size(0)):
            out = torch.cat([out, x[i:i + 1] + out[-1:]], 0)
        return n, torch.stack(means), rows, tail.sum() / max(tail.size(0), 1), tail.shape[0], out, out.size(0)


CASES["slices_with_run_time_bounds"] = (SlicesWithRunTimeBounds, [(x[0].reshape(2, 2).repeat(2, 1),)
                                                                 for x in sign_inputs()] + [(torch.ones(4, 2),)])



class AccumulatorBecomesTensor(nn.Module):
    """ACT/PonderNet style: `cost = 0` and `prev = None` before a data-dependent
    `while`, a tensor after its first iteration (the loop's first iteration is
    peeled; a loop that runs no iteration returns the int 0 and None, as eager)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        cost = 0
        halt = 0.0
        prev = None
        steps = 0
        while x.abs().sum() > 1.0 and steps < 5:
            y = torch.tanh(self.fc(x))
            if prev is not None:
                y = y + 0.5 * prev
            prev = y
            p = torch.sigmoid(y.mean())
            cost = cost + (1 - p)
            halt += p
            x = x * 0.5
            steps += 1
        return cost, halt, prev, steps


CASES["accumulator_becomes_tensor"] = (AccumulatorBecomesTensor, sign_inputs() + [(torch.zeros(1, 4),)])


class AccumulatorOverRunTimeRange(nn.Module):
    """ACT over a sequence (Graves' RNN style): `ponder_cost = 0` and `prev = None`
    carried by `for t in range(n)` with a run-time `n`; the first iteration is
    peeled behind `if 0 < n` (n = 0 keeps eager's 0 and None)."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)

    def forward(self, x):
        n = int((x > 0).sum())
        h = torch.zeros(1, 4)
        ponder_cost = 0
        prev = None
        for t in range(n):
            h = self.cell(x * (t + 1), h)
            ponder_cost = ponder_cost + torch.sigmoid(h).mean()
            prev = h if prev is None else prev + h
        return h, ponder_cost, prev


CASES["accumulator_over_run_time_range"] = (AccumulatorOverRunTimeRange,
                                            sign_inputs() + [(torch.tensor([[1.0, -1.0, -1.0, -1.0]]),)])


class OperatorCallsInPlace(nn.Module):
    """In-place updates spelled as calls: `operator.setitem`, `operator.iadd`/`imul`,
    `h.__iadd__`, `torch.Tensor.__setitem__` on tensors (every name bound to them
    sees the change), `operator.iadd` on a list and `operator.setitem` on a dict,
    and `operator.iadd` on an int (which changes nothing: its value is the sum).
    Their unused results were dropped with the change."""

    def forward(self, x):
        h = x * 2
        alias = h
        operator.setitem(h, (0, 0), -5.0)
        operator.iadd(h, 1)
        h.__imul__(3)
        torch.Tensor.__setitem__(alias, (0, 1), 7.0)
        if h.sum() > 0:
            operator.isub(alias, x)
        outs = [h]
        operator.iadd(outs, [x + 1])
        d = {"a": x}
        operator.setitem(d, "b", h.sum())
        n = 3
        m = operator.iadd(n, 2)
        return h, alias, outs, d, n, m


CASES["operator_calls_in_place"] = (OperatorCallsInPlace, sign_inputs())



class _Temperature:
    """transformers' logits warpers are plain objects with `__call__`, not modules."""

    def __init__(self, temperature):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class _RepetitionPenalty:
    def __init__(self, penalty):
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        score = torch.gather(scores, 1, input_ids)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        return scores.scatter(1, input_ids, score)


class _ProcessorList(list):
    def __call__(self, input_ids, scores):
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


class _MaxLength:
    def __init__(self, max_length):
        self.max_length = max_length

    def __call__(self, input_ids, scores):
        return input_ids.shape[-1] >= self.max_length


class GreedyGenerateProcessors(nn.Module):
    """transformers' greedy `generate` as published: logits processors and stopping
    criteria as plain callable objects (a list subclass with `__call__`, one built
    in forward), ids and attention mask grown together by torch.cat each step
    (carried with one dynamic length), `unfinished_sequences`, an EOS break."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 8)
        self.head = nn.Linear(8, 12)
        self.processors = _ProcessorList([_RepetitionPenalty(1.3)])
        self.criteria = [_MaxLength(9)]
        self.eos = 9

    def forward(self, x):
        input_ids = (x.abs() * 7).long() % 12
        attention_mask = torch.ones_like(input_ids)
        processors = _ProcessorList([*self.processors, _Temperature(0.7)])
        unfinished = torch.ones(input_ids.shape[0], dtype=torch.long)
        cur_len = input_ids.shape[-1]
        while cur_len < 12:
            h = (self.emb(input_ids) * attention_mask[..., None]).sum(1) / attention_mask.sum(1, keepdim=True)
            scores = processors(input_ids, self.head(h))
            next_tokens = torch.argmax(scores, dim=-1) * unfinished
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            attention_mask = torch.cat([attention_mask, attention_mask.new_ones((attention_mask.shape[0], 1))], dim=-1)
            cur_len = cur_len + 1
            unfinished = unfinished.mul((next_tokens != self.eos).long())
            if unfinished.max() == 0:
                break
            if any(c(input_ids, scores) for c in self.criteria):
                break
        return input_ids, attention_mask.sum()


CASES["greedy_generate_processors"] = (GreedyGenerateProcessors, [  # EOS after 3, 2 and 4 steps; the length limit
    (torch.randn(2, 4, generator=torch.Generator().manual_seed(int(k * 10))) * k,) for k in (0.3, 1.0, 2.0, 5.0)])



class FunctoolsReduce(nn.Module):
    """`functools.reduce` over compile-time sequences: a lambda folding the layers,
    `operator.add` over a list of tensors, `operator.mul` over the shape (was one
    opaque call: the whole forward ran as Python, reason a SyntaxError)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        h = functools.reduce(lambda acc, layer: torch.relu(layer(acc)), self.layers, x)
        total = functools.reduce(operator.add, [h, x * 2, x.sign()])
        n = functools.reduce(operator.mul, x.shape)
        if total.sum() > 0:
            return total / n, n
        return -total, functools.reduce(lambda a, b: a + b, [1, 2, 3])


CASES["functools_reduce"] = (FunctoolsReduce, sign_inputs())



class StateInWhileLoop(nn.Module):
    """Tacotron's decoder keeps its RNN state on `self` and steps it in `while True:`
    until a stop condition (`self.h = self.cell(x, self.h)`): the loop-carried state's
    key (`$state:...`) was given to an SSA value as its name, and xDSL's ValueError
    sent the whole forward to Python."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)

    def forward(self, x):
        self.h = torch.zeros_like(x)
        outs = []
        while True:
            self.h = self.cell(x, self.h)
            outs.append(self.h)
            if self.h.sum() > 0 or len(outs) == 5:
                break
        return torch.stack(outs), self.h * 2


CASES["state_in_while_loop"] = (StateInWhileLoop, sign_inputs() + [(torch.zeros(1, 4),)])



class SplitByDataCount(nn.Module):
    """`torch.split(x, [k, n - k])` with k counted from the data, on one row: the
    statement runs as Python, typed from compile-time runs that all gave k = 1
    (positive stand-ins), so a call with k = 0 raised "returned (0, 4); the code
    after it was compiled for (1, 4)". A third run on negated values and k = 0 shows
    the size varies."""

    def forward(self, x):
        k = int((x[:, 0] > 0).sum())
        a, b = torch.split(x, [k, x.size(0) - k])
        return a.sum(0), b.sum(0)


CASES["split_by_data_count"] = (SplitByDataCount, [(torch.ones(1, 4),), (-torch.ones(1, 4),)])



class InPlaceOnFreshTensors(nn.Module):
    """Message passing as PyG-style code writes it: in-place methods on tensors just
    made (`torch.zeros(n, d).scatter_add_(...)`, `x.new_zeros(n).index_add_(...)`,
    `(a * 2).clamp_(min=0)`), which nobody else holds (they ran as Python: "in-place
    tensor method 'scatter_add_'")."""

    def forward(self, x):
        idx = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
        out = torch.zeros(3, 4).scatter_add_(0, idx[:, None].expand(-1, 4), x)
        deg = x.new_zeros(3).index_add_(0, idx, torch.ones(idx.shape[0]))
        norm = (deg * 2).clamp_(min=1).pow_(-0.5)
        return out * norm[:, None], deg


CASES["in_place_on_fresh_tensors"] = (InPlaceOnFreshTensors, [(x[0].reshape(2, 2).repeat(2, 2),)
                                                             for x in sign_inputs()])



class RowsKeptInWhile(nn.Module):
    """Rows kept by a data-dependent `while` (TorchScript's test style):
    `if x[i].sum() > 0: out = torch.cat([out, x[i:i + 1]])` on a loop-carried `out`
    that starts empty. The if's two results had different sizes in a loop body (no
    code after it to copy into each branch): the whole forward ran as Python. They
    join into one tensor whose row count is known at run time."""

    def forward(self, x):
        out = x.new_zeros(0, x.size(1))
        i = 0
        while out.size(0) < 3 and i < x.size(0):
            if x[i].sum() > 0:
                out = torch.cat([out, x[i:i + 1] * 2], 0)
            i += 1
        return out, out.sum(0), out.shape[0]


CASES["rows_kept_in_while"] = (RowsKeptInWhile, [(x[0].reshape(2, 2).repeat(3, 1),) for x in sign_inputs()]
                               + [(torch.arange(12.0).reshape(6, 2) - 3,)])



class LoopElseExits(nn.Module):
    """`for ... else: continue` in an outer loop (skip the row unless an inner search
    broke) and `for ... else: break` (leave the outer loop when the inner one found
    nothing): the else block's exit belongs to the outer loop ("continue outside a
    loop" sent the loop to Python)."""

    def forward(self, x):
        out = []
        for i in range(4):
            for j in range(2):
                if x[i, j] > 1:
                    break
            else:
                continue
            out.append(x[i] * 2)
        total = x.new_zeros(2)
        for i in range(4):
            for j in range(2):
                if x[i, j] < -1:
                    break
            else:
                break
            total = total + x[i]
        return out, total


CASES["loop_else_exits"] = (LoopElseExits, [(x[0].reshape(2, 2).repeat(2, 1) * 2,) for x in sign_inputs()]
                            + [(torch.tensor([[2.0, -2.0], [0.0, 3.0], [-3.0, 0.0], [0.5, 0.5]]),)])



class AttentionWithoutWeights(nn.Module):
    """`a, _ = self.attn(x, x, x, need_weights=False)` (BART-style layers) and the
    result kept whole (`out = ...; out[0], out[1]`): nn.MultiheadAttention returns
    (tensor, None); the tuple holding None was a Python object a sub-DNN returned,
    so the statement (or the forward) ran as Python."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 2, batch_first=True)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        x = x.reshape(1, -1, 4)
        a, weights = self.attn(x, x, x, need_weights=False)
        if a.sum() > 0:
            return self.fc(a), weights
        out = self.attn(a, x, x, need_weights=False)
        return out[0] * 2, out[1]


CASES["attention_without_weights"] = (AttentionWithoutWeights, [(x[0].repeat(1, 3),) for x in sign_inputs()])


class ModuleDictByRunTimeKey(nn.Module):
    """`self.heads[key](x)` with the key chosen by the data (a task or language
    head picked per input); a key the dict lacks raises eager's KeyError."""

    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"pos": nn.Linear(4, 4), "neg": nn.Sequential(nn.Linear(4, 4), nn.Tanh())})

    def forward(self, x):
        key = "pos" if x.sum() > 0 else "neg"
        if x.abs().max() > 10:
            key = "large"
        return self.heads[key](x) * 2


CASES["module_dict_by_run_time_key"] = (ModuleDictByRunTimeKey, sign_inputs() + [(torch.full((1, 4), 20.0),)])


class RowsOfComputedTensors(nn.Module):
    """`for r in t` over tensors forward computes: rows of a known count (unrolled
    once shapes are inferred), of a count the data decides (`unique()`, a mask, a
    `nonzero()`: a host loop), and a `tolist()` read on the host."""

    def forward(self, x):
        acc = x[0] * 0
        for r in torch.tanh(x):
            acc = acc + r
            if acc.sum() > 1.5:
                break
        labels = (x > 0).long().sum(1)
        means = x.new_zeros(x.shape[1])
        for c in labels.unique():
            means = means + x[labels == c].mean(0)
        picked = x.sum() * 0
        for idx in torch.nonzero(x > 0.5):
            picked = picked + x[idx[0], idx[1]]
        total = 0.0
        for v in x.sum(1).tolist():
            total += v
        return acc, means, picked, total


CASES["rows_of_computed_tensors"] = (RowsOfComputedTensors, [(torch.randn(4, 3, generator=torch.Generator().manual_seed(s)) * m,)
                                                            for s, m in ((0, 1.0), (1, 3.0), (2, -2.0), (3, 0.1))])


class LoopsOverTupleResults(nn.Module):
    """`for col in torch.unbind(x, dim=1)`, over `split`, over a mask selection's
    `unbind()`: Python tuples, not a tensor's rows (a loop over range(len(t))
    indexing the tuple with a run-time int was traced with the example's index:
    every column was the same one, on ONNX Runtime and TVM)."""

    def forward(self, x):
        outs = []
        for col in torch.unbind(x, dim=1):
            outs.append(col.sum())
        acc = x.new_zeros(4)
        for r in x[x[:, 2] > 0].unbind(0):
            acc = torch.maximum(acc, r)
        for part in x.split(2):
            acc = acc + part.mean()
        return torch.stack(outs), acc


CASES["loops_over_tuple_results"] = (LoopsOverTupleResults, [
    (torch.arange(20.0).reshape(5, 4),), (torch.tensor([[1.0, -5, -5, -5]] + [[-1.0, 0, 0, 0]] * 4),),
    (torch.randn(5, 4, generator=torch.Generator().manual_seed(3)),)])


class ModuleListOutOfRange(nn.Module):
    """`self.layers[int(i)](x)` with an index from the data, out of range for some
    inputs: eager's IndexError (the last layer was called instead)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        return self.layers[int(x.sum().clamp(-5, 5))](x)


CASES["module_list_out_of_range"] = (ModuleListOutOfRange, [(torch.full((1, 4), v),) for v in (0.1, 0.3, 0.6, -0.3, 1.0, -1.0)])


class TupleByRunTimeIndex(nn.Module):
    """A split's tuple indexed by an int read from the data (a sub-DNN traced it
    with the example's index), rows read after an in-place update of their tensor,
    a loop's last row read after the loop."""

    def forward(self, x):
        feats = x.split(1, dim=1)
        picked = feats[int(x[0, 0].abs().clamp(max=3))]
        y = x * 1.0
        acc = x.new_zeros(4)
        for r in y:
            y += 1
            acc = acc + r
        for last in x[x[:, 0] > 0]:
            pass
        return picked, acc, last * 2


class RowsUpdatedInPlace(nn.Module):
    """`for b in boxes: b.mul_(2)` on rows of a tensor forward made (a row is a view:
    boxes changes; the update was dropped), a tuple indexed by an int computed with
    `%`, and a module list indexed by a 0-d tensor."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        boxes = x.clone()
        for b in boxes:
            b.mul_(2)
        k = int(x[0, 0].abs().clamp(max=9))
        col = x.chunk(2, 1)[k % 2]
        return boxes, col, self.layers[x[0].abs().argmax()](x)


CASES["rows_updated_in_place"] = (RowsUpdatedInPlace, [(torch.tensor([[0.5, 1.0, 2.0, 3.0], [2.5, -1.0, 0.0, 1.0]]),),
                                                        (torch.tensor([[3.5, 1.0, 2.0, 3.0], [-1.0, 4.0, 0.0, 1.0]]),)])


CASES["tuple_by_run_time_index"] = (TupleByRunTimeIndex, [
    (torch.tensor([[0.5, 1.0, 2.0, 3.0], [2.5, -1.0, 0.0, 1.0]]),),
    (torch.tensor([[2.5, 1.0, 2.0, 3.0], [-1.0, 4.0, 0.0, 1.0]]),),
    (torch.tensor([[-1.5, 1.0, 2.0, 3.0], [1.0, 4.0, 0.0, 1.0]]),)])


class RowsKeptThenUpdated(nn.Module):
    """Rows of a selection kept in a list (views), the selection updated in place
    after the loop: the kept rows change too (they kept their old values)."""

    def forward(self, x):
        y = x[x[:, 0] > 0] * 2
        kept = []
        for r in y:
            kept.append(r)
        y.zero_()
        return torch.stack(kept) if kept else x.sum(0, keepdim=True)


class RowLoopNameUnbound(nn.Module):
    """A name a loop over no rows never bound, then read: eager's UnboundLocalError
    (the region's marker for it was returned)."""

    def forward(self, x):
        for r in x[x[:, 1] > 4]:
            last = r * 2
        return last


class RollByComputedShift(nn.Module):
    """`torch.roll` by a shift computed from the data (ONNX Runtime kept the example's)."""

    def forward(self, x):
        return torch.roll(x, int(x[0, 0] > 0) + 1, 1) * 2


class EnumerateZipOverRows(nn.Module):
    """enumerate/zip over rows known at run time (with start, break/else, a range, a
    held list), rows unpacked by a tuple target, and comprehensions and generators
    over them: host loops (each ran as Python)."""

    def forward(self, x):
        y = x[x[:, 0] > 0]
        acc = x.new_zeros(x.shape[1])
        for i, r in enumerate(y, start=2):
            if r.sum() > 6:
                break
            acc = acc + r * i
        else:
            acc = acc - 1
        n = int((x > 0).sum())
        for k, r, s in zip(range(n), y, y.flip(0)):
            acc = acc + r * s * k
        total = x.new_zeros(())
        for a, b, c in y:
            total = total + a * b - c
        halves = [r / 2 for r in y]
        for i, h in enumerate(halves):
            acc = acc + h * i
        pairs = [a * b for a, b in zip(y, y * 2)]
        big = any(r.sum() > 2 for r in y)
        return acc, total, torch.stack(pairs).sum(0) if pairs else x.sum(0), big, sum(r.max() for r in y)


_OFFSETS = torch.tensor([0.5, -1.0, 2.0])


class _Stats:
    MEAN = torch.tensor([0.25, 0.5, -0.5])


class TensorsHeldOutsideTheModel(nn.Module):
    """Tensors the code reaches outside the model: a global, a class attribute, a
    default argument of forward and of a helper (made once, the same object every
    call: `torch.randn` there is not redrawn). Constants of the program; each was a
    fallback region ("unsupported value", "cannot resolve the global")."""

    ANCHORS = torch.tensor([1.0, 2.0, 4.0])  # read through self: one tensor for every instance

    def _scaled(self, x, scale=torch.tensor(0.5)):
        return x * scale

    def forward(self, x, noise=torch.randn(3, generator=torch.Generator().manual_seed(5))):
        y = self._scaled(x - _Stats.MEAN) / self.ANCHORS + _OFFSETS
        if y.sum() > 0:
            return y + noise
        return y * noise.abs()


class ZipsOfSelections(nn.Module):
    """enumerate(zip(...)) over topk's two results, rows of a selection's tolist()
    unpacked into names, and a loop over such a list, again inside an `if` (each ran
    as Python: topk's elements were taken for tuples, shape inference met the list's
    run-time length, and the second loop's names were taken for reads of the first's)."""

    def forward(self, x):
        vals, ids = x[:, 0].topk(2)
        acc = x.new_zeros(())
        for j, (v, i) in enumerate(zip(vals, ids), start=1):
            acc = acc + v * j + i.float()
        kept = x[x[:, 2] > x[:, 0]]
        widths = []
        for x1, y1, x2 in kept.tolist():
            widths.append(x2 - x1)
        for r in kept:
            acc = acc + r[0]
        if acc > 0:  # (a later loop binding the same name: no read of the first loop's)
            for r in kept:
                acc = acc + r[1]
        return acc, widths, len(kept.tolist())


class ExpertLoopInConfigBranch(nn.Module):
    """The library's expert loop in the taken branch of an implementation switch whose
    other branch loops over the same names: names first bound in the loop were taken
    as read after it (textually later, in the branch not taken), and from the switch
    to the end of forward ran as Python."""

    def __init__(self, impl="loop"):
        super().__init__()
        self.experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.impl = impl

    def forward(self, x, sel):
        out = torch.zeros_like(x)
        hit = torch.unique(sel).unsqueeze(1)
        if self.impl == "loop":
            for e in hit:
                rows = torch.where(sel == e.squeeze(0))[0]
                out.index_add_(0, rows, self.experts[e](x[rows]))
        elif self.impl == "items":
            for e in hit:
                rows = torch.where(sel == e.item())[0]
                out.index_add_(0, rows, self.experts[e.item()](x[rows]))
        return out


class RowsUnpackedIntoTooFewNames(nn.Module):
    """`for a, b in rows` over rows of three: eager's ValueError once a row is unpacked
    (none when the selection is empty)."""

    def forward(self, x):
        acc = x.new_zeros(())
        for a, b in x[x[:, 0] > 0]:
            acc = acc + a * b
        return acc


class AppendsUnderDataDependentIfs(nn.Module):
    """Post-processing as published: rows kept by a data-dependent test in a loop the
    frontend unrolls (the list's length differs per path), then appended to, looped
    over, indexed, stacked and returned; a nested test; indices kept as ints."""

    def forward(self, x):
        picks, idx = [], []
        for i in range(x.shape[0]):
            if x[i].sum() > 0:
                if x[i].max() > 1.5:
                    picks.append(x[i] * 2)
                picks.append(x[i].abs())
                idx.append(i)
        total = x.new_zeros(x.shape[1])
        for p in picks:
            total = total + p.relu()
        if not picks:
            return total, len(idx), torch.tensor(idx, dtype=torch.long), picks
        return total, len(idx), torch.tensor(idx, dtype=torch.long), [torch.stack(picks), picks[-1]]


class SwitchMoeWithCapacity(nn.Module):
    """Switch Transformer's top-1 routing with a capacity: each expert's tokens
    (`nonzero`, a count only the run knows) cut to the capacity, the rest dropped
    and counted; an auxiliary load-balancing loss beside the output."""

    def __init__(self, d=8, experts=4):
        super().__init__()
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, d))
                                     for _ in range(experts))
        self.n = experts

    def forward(self, x):
        b, t, d = x.shape
        tokens = x.reshape(-1, d)
        probs = F.softmax(self.router(tokens), dim=-1)
        gate, idx = probs.max(dim=-1)
        capacity = int(1.0 * tokens.shape[0] / self.n)
        out = torch.zeros_like(tokens)
        dropped = 0
        for e in range(self.n):
            sel = torch.nonzero(idx == e).squeeze(-1)
            if sel.numel() > capacity:
                dropped += sel.numel() - capacity
                sel = sel[:capacity]
            if sel.numel() == 0:
                continue
            out[sel] = self.experts[e](tokens[sel]) * gate[sel].unsqueeze(-1)
        frac = F.one_hot(idx, self.n).float().mean(0)
        return out.reshape(b, t, d), self.n * (frac * probs.mean(0)).sum(), dropped


class TorchAssertChecks(nn.Module):
    """`torch._assert` (assert that symbolic tracing keeps) on static and run-time
    conditions, by position and by keyword: eager's AssertionError where it fails."""

    def forward(self, x):
        torch._assert(x.shape[-1] == 4, "last dim must be 4")
        torch._assert(x.sum() < 2, f"sum too large for {x.shape[0]} rows")
        torch._assert(condition=(x > -3).all(), message="too small")
        return x + 1


class IsinstanceChecks(nn.Module):
    """isinstance() of a value two paths join (a tensor either way, found by shape
    inference; a tensor or None, per path), of a number, and of the model's own
    parameter and buffer (an nn.Parameter, folded False before: a wrong answer)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("scale", torch.full((4,), 0.5))

    def forward(self, x):
        if x.shape[0] > 2:
            x = x[:2]
        if isinstance(x, torch.Tensor):
            x = x * 2
        if isinstance(self.fc.weight, nn.Parameter):
            x = self.fc(x)
        if isinstance(self.scale, nn.Parameter):
            x = x + 100
        k = x.shape[0] if x.sum() > 0 else x.shape[1]
        y = x.sum() if x.mean() > 0 else None
        if isinstance(y, torch.Tensor) and isinstance(k, int):
            return x * k + y
        return x


class ChainedInPlaceStatement(nn.Module):
    """`h.mul_(2).add_(1)` as a statement: each in-place call runs once (looking the
    callee up for `torch._assert` ran `mul_` a second time)."""

    def forward(self, x):
        h = x * 1
        h.mul_(2).add_(1)
        h.clamp_(min=-1).mul_(3)
        return h


class IntOfStaticSizes(nn.Module):
    """`int(x.numel())`, `float(x.size(1))` of sizes the shapes decide: numbers known at
    compile time (`torch.arange(int(n))` ran as Python, its size "depending on a
    run-time scalar"); `int()` of data stays a host read."""

    def forward(self, x):
        pos = torch.arange(int(x.numel())).reshape(x.shape) * 2
        scale = float(x.size(1)) ** 0.5
        k = int((x > 0).sum())
        return x * scale + pos * k, k


_LARGE_TABLE = torch.linspace(-1, 1, 70_000)


class LargeTensorHeldOutsideTheModel(nn.Module):
    """A global tensor past the constant limit: run as Python (a region), as eager reads it."""

    def forward(self, x):
        return x * _LARGE_TABLE[:3] + _LARGE_TABLE.mean()


_SELECTIONS = [(torch.tensor([[1.0, 2.0], [-1.0, 3.0], [2.0, 5.0]]),),
               (torch.tensor([[-1.0, 2.0], [-1.0, 3.0], [-2.0, 5.0]]),),
               (torch.tensor([[-1.0, 2.0], [-1.0, 3.0], [2.0, 4.0]]),)]
_SELECTIONS_3 = [(torch.tensor([[1.0, 2.0, 0.5], [-1.0, 3.0, 1.0], [2.0, 5.0, 4.0]]),),
                 (torch.tensor([[-1.0, 2.0, 0.5], [-1.0, 3.0, -2.0], [-2.0, 5.0, -3.0]]),),
                 (torch.tensor([[1.0, 2.0, 1.5], [-1.0, 3.0, 1.0], [2.0, 5.0, 4.0]]),)]
CASES["rows_kept_then_updated"] = (RowsKeptThenUpdated, _SELECTIONS)
CASES["row_loop_name_unbound"] = (RowLoopNameUnbound, _SELECTIONS)
CASES["roll_by_computed_shift"] = (RollByComputedShift, _SELECTIONS)
CASES["zips_of_selections"] = (ZipsOfSelections, _SELECTIONS_3)
CASES["rows_unpacked_into_too_few_names"] = (RowsUnpackedIntoTooFewNames, _SELECTIONS_3)
CASES["large_tensor_held_outside_the_model"] = (LargeTensorHeldOutsideTheModel, _SELECTIONS_3)
CASES["expert_loop_in_config_branch"] = (ExpertLoopInConfigBranch, [
    (torch.linspace(-1, 1, 24).reshape(6, 4), torch.tensor([0, 2, 2, 0, 1, 0])),
    (torch.linspace(-2, 1, 24).reshape(6, 4), torch.tensor([1, 1, 1, 1, 1, 1])),
    (torch.linspace(-1, 3, 24).reshape(6, 4), torch.tensor([2, 0, 2, 0, 2, 0]))])
CASES["tensors_held_outside_the_model"] = (TensorsHeldOutsideTheModel, [
    (torch.tensor([[1.0, 2.0, 0.5], [-1.0, 3.0, 1.0]]),), (torch.tensor([[-1.0, -2.0, 0.5], [-1.0, -3.0, 1.0]]),)])
CASES["appends_under_data_dependent_ifs"] = (AppendsUnderDataDependentIfs, _SELECTIONS_3 + [
    (torch.tensor([[-1.0, -2.0, 0.5], [-1.0, -3.0, 1.0], [-2.0, 5.0, -3.0]]),)])
CASES["switch_moe_with_capacity"] = (SwitchMoeWithCapacity, [  # 4, 3, 1 and 2 tokens dropped
    (torch.linspace(-1, 1, 64).reshape(2, 4, 8),), *[(torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(s)),)
                                                     for s in (1, 3, 0)]])
CASES["torch_assert_checks"] = (TorchAssertChecks, sign_inputs() + [(torch.full((1, 4), -4.0),)])
CASES["isinstance_checks"] = (IsinstanceChecks, sign_inputs() + [(torch.linspace(-1, 2, 12).reshape(3, 4),)])
CASES["chained_in_place_statement"] = (ChainedInPlaceStatement, sign_inputs())
CASES["int_of_static_sizes"] = (IntOfStaticSizes, sign_inputs())
CASES["enumerate_zip_over_rows"] = (EnumerateZipOverRows, [
    (torch.tensor([[1.0, 2.0, 0.5], [-1.0, 3.0, 1.0], [2.0, 5.0, -1.0], [0.5, 0.5, 0.5]]),),
    (torch.tensor([[-1.0, 2.0, 0.5], [-1.0, 3.0, 1.0], [-2.0, 5.0, -1.0], [-0.5, 0.5, 0.5]]),),
    (torch.tensor([[1.0, 1.0, 0.5], [-1.0, 3.0, 1.0], [2.0, 0.5, -1.0], [0.5, 0.5, 0.5]]),)])




class NoneCarriedThroughWhileTrue(nn.Module):
    """`past = None` carried through `while True: ... if ...: break` (a decoder's
    cache): the first iteration runs on its own, its `break` skipping the loop
    (ran as Python: peeling refused loops with a break)."""

    def forward(self, x):
        past = None
        h = x
        steps = 0
        while True:
            h = torch.tanh(h * 1.5 + 0.25)
            if past is not None:
                h = h + 0.5 * past
            past = h
            steps += 1
            if h.sum() > 2.5 or steps >= 4:
                break
        return h, steps


class NoneUntilLoopBreaks(nn.Module):
    """`prev = None` in a loop over a run-time range that breaks in its first
    iteration or a later one, or never."""

    def forward(self, x):
        prev = None
        for i in range(x.size(0)):
            y = torch.tanh(x[i] * (i + 1))
            if prev is None:
                if y.sum() > 1:
                    prev = y
                    break
            elif (y - prev).abs().sum() < 0.5:
                break
            else:
                y = y + prev
            prev = y
        return prev


class NoneInAHelpersTuple(nn.Module):
    """A helper returns `(y, 1)` or `(None, 0)`, and forward tests `y is None`: the
    tuple of the first path stood for both (`y is None` folded false; eager's
    None path gave `None * 0`'s TypeError instead of `-x`)."""

    def pick(self, x):
        y = torch.tanh(x)
        if y.sum() > 0:
            return y, 1
        return None, 0

    def forward(self, x):
        y, k = self.pick(x)
        if y is None:
            return -x
        return y * k


class NoneInALoopCarriedTuple(nn.Module):
    """`t = (None, 0)`, then `t = (x[i], i)` in a loop: `t[0] is None` after the loop
    was lowered as false (a tuple item's None was not followed through the loop)."""

    def forward(self, x):
        t = (None, 0)
        for i in range(x.size(0)):
            if x[i].sum() > 0:
                t = (x[i], i)
        if t[0] is None:
            return x.sum(0) * 0 - 1
        return t[0] * t[1]


class EarlyReturnsFromARowLoop(nn.Module):
    """A helper returns from inside a loop over a tensor's rows, on two nested
    conditions, or `None, -1` after it; forward tests `y is None` (ran as Python;
    compiled with only the first iteration peeled, `y is None` was folded false)."""

    def pick(self, x):
        for j in range(x.size(0)):
            y = torch.tanh(x[j] * 2)
            if y.sum() > 0:
                if y.max() > 0.9:
                    return y * 2, j
                return y, j
        return None, -1

    def forward(self, x):
        y, j = self.pick(x)
        if y is None:
            return x.sum(0), j
        return y, j


class ReturnFromARunTimeRange(nn.Module):
    """Helpers that return from inside a loop over `range(x.size(0))` (a run-time
    range): a tensor, or None when no row qualifies (ran as Python: the slot the
    return leaves was None on entry, a tensor after)."""

    def first_positive(self, x):
        for j in range(x.size(0)):
            if x[j].sum() > 0:
                return x[j] * 2
        return x[0] * 0

    def find(self, x):
        for j in range(x.size(0)):
            if x[j].max() > 0.8:
                return x[j]

    def forward(self, x):
        r = self.find(x)
        if r is None:
            r = -x.sum(0)
        return self.first_positive(x) + 1, r


class IsinstanceOfHostNumbers(nn.Module):
    """isinstance() of Python numbers read from data: a float answered True for every
    class (Tensor, str, int, complex: shape inference asked its stand-ins and took a
    pair of answers for True); `k ** k` is an int, or a float where k < 0."""

    def forward(self, x, n):
        v = x.mean().item()
        k = int(n.sum())
        flags = (isinstance(v, torch.Tensor), isinstance(v, str), isinstance(v, int), isinstance(v, float),
                 isinstance(v, bool), isinstance(k, float), isinstance(k, int), isinstance(k ** k, int))
        c = v if v > 0 else k
        return flags, isinstance(c, float), isinstance(c, int)


class LoopVariableReadAfterTheLoop(nn.Module):
    """The variable of a loop over a run-time range read after it (speculative
    decoding's accepted prefix): its last value, or the one from before the loop.
    It ran as a region reading a name the host did not have: NameError every call."""

    def forward(self, draft, target):
        n = 0
        for i in range(draft.size(0)):
            if draft[i] != target[i]:
                break
            n = i + 1
        last = -1
        for last in range(draft.size(0)):
            if draft[last] > 2:
                break
        total = target.sum() * 0
        for k in range(target.size(0)):
            total = total + target[k]
        return n, i, last, total * k


class CacheGrownInABreakingLoop(nn.Module):
    """`past = k if past is None else torch.cat([past, k], 0)` in a loop over a run-time
    range that breaks (a greedy decoder's KV cache): shape inference crashed in sympy
    ("BooleanAtom not allowed", from the `is None` test's truth value taken for a size)
    and the whole forward ran as Python."""

    def __init__(self):
        super().__init__()
        self.k = nn.Linear(3, 3)

    def forward(self, x):
        past = None
        for t in range(x.size(0)):
            k = self.k(x[t:t + 1])
            past = k if past is None else torch.cat([past, k], 0)
            if past.sum() > 2:
                break
        return past


class TryRegionThenCompiled(nn.Module):
    """`try: row = x[int(idx)] except IndexError: row = zeros(...)`: the try runs as
    Python; `row` is bound on both of its paths, so `row * 2` after it compiles
    (it ran as Python too: the region's result was typed as None)."""

    def forward(self, x):
        idx = x[0, 0].abs() * 3
        try:
            row = x[int(idx)]
        except IndexError:
            row = torch.zeros(x.size(1))
        return row * 2 + 1


_ROWS_3 = [(torch.full((3, 4), 1.0),), (torch.full((3, 4), -1.0),),
           (torch.tensor([[0.1] * 4, [0.5] * 4, [1.0] * 4]),), (torch.tensor([[-1.0] * 4, [1.0] * 4, [-2.0] * 4]),),
           (torch.tensor([[-0.1] * 4, [0.1] * 4, [1.0] * 4]),), (torch.tensor([[-0.1] * 4, [-0.3] * 4, [1.0] * 4]),)]
CASES["none_carried_through_while_true"] = (NoneCarriedThroughWhileTrue, [  # breaks after 1, 2 and 4 iterations
    (torch.full((1, 4), 2.0),), (torch.full((1, 4), -1.0),), (torch.full((1, 4), 0.1),),
    (torch.tensor([[0.5, 0.2, 0.1, 0.0]]),)])
CASES["none_until_loop_breaks"] = (NoneUntilLoopBreaks, _ROWS_3)
CASES["none_in_a_helpers_tuple"] = (NoneInAHelpersTuple, sign_inputs()[:2] + [(torch.tensor([[0.5, -0.2, 0.1, 0.3]]),)])
CASES["none_in_a_loop_carried_tuple"] = (NoneInALoopCarriedTuple, _ROWS_3)
CASES["early_returns_from_a_row_loop"] = (EarlyReturnsFromARowLoop, _ROWS_3)
CASES["return_from_a_run_time_range"] = (ReturnFromARunTimeRange, _ROWS_3)
CASES["isinstance_of_host_numbers"] = (IsinstanceOfHostNumbers, [
    (torch.tensor([4.0, 4.0]), torch.tensor([2])), (torch.tensor([-4.0, -4.0]), torch.tensor([-2]))])
CASES["loop_variable_read_after_the_loop"] = (LoopVariableReadAfterTheLoop, [
    (torch.tensor([1, 2, 3]), torch.tensor([0, 2, 3])), (torch.tensor([1, 2, 3]), torch.tensor([1, 2, 3])),
    (torch.tensor([1, 2, 0]), torch.tensor([1, 2, 5])), (torch.tensor([1, 1, 1]), torch.tensor([1, 1, 0]))])
CASES["cache_grown_in_a_breaking_loop"] = (CacheGrownInABreakingLoop, [
    (torch.full((5, 3), 3.0),), (torch.full((5, 3), -3.0),), (torch.full((5, 3), -10.0),),  # 5, 4 and 1 rows
    (torch.linspace(-1, 2, 15).reshape(5, 3),)])
CASES["try_region_then_compiled"] = (TryRegionThenCompiled, [
    (torch.tensor([[0.2, 1.0], [2.0, 3.0]]),), (torch.tensor([[0.9, 1.0], [2.0, 3.0]]),)])


def check_matches_eager(name: str, **compile_options) -> None:
    """Compile case `name` and compare it with eager on all its inputs (type and values)."""
    import dycl
    from dycl.demo import max_abs_error

    cls, inputs = CASES[name]
    torch.manual_seed(0)
    model = cls().eval()
    cm = dycl.compile(model, inputs[0], **compile_options)
    with torch.no_grad():
        for x in inputs:
            # Fresh copies: a model may update its input in place, as eager does.
            expected, got = (_outcome(f, x) for f in (model, cm))
            if isinstance(expected, Exception) or isinstance(got, Exception):
                assert (type(got), got.args) == (type(expected), expected.args), (name, x, expected, got)
                continue
            assert _types(got) == _types(expected), (name, x)
            assert max_abs_error(expected, got) <= 1e-5, (name, x)


def _outcome(f, x):
    try:
        return f(*[t.clone() for t in x])
    except Exception as e:  # the model's own raise/assert: the compiled model must raise the same
        return e


def _types(v):
    """The Python type of `v` and, through tuples, lists, dicts and dataclasses, of what they hold."""
    if dataclasses.is_dataclass(v):
        return type(v), _types(dataclasses.asdict(v))
    if isinstance(v, (tuple, list)):
        return type(v), [_types(x) for x in v]
    if isinstance(v, dict):  # (an OrderedDict stays one, in its order)
        return type(v), [(k, _types(x)) for k, x in v.items()]
    return type(v)


class ForElseOverRunTimeRange(nn.Module):
    """`for i in range(x.size(1)): ... break` / `else:` over a size known from the input:
    the else block runs when no break left the loop (refused before, as a run-time range)."""

    def forward(self, x):
        r = x
        for i in range(x.size(1)):
            if x[0, i] > 1:
                r = x * i
                break
        else:
            r = x - 1
        return r


CASES["for_else_over_run_time_range"] = (ForElseOverRunTimeRange, sign_inputs() + [
    (torch.tensor([[0.0, 3.0, 1.0, 0.5]]),), (torch.tensor([[5.0, 0.0, 1.0, 2.0]]),),
    (torch.tensor([[0.0, 0.0, 0.0, 3.0]]),)])


class NumberWhoseTypeDependsOnThePath(nn.Module):
    """`best = -1`, then `best = x[i].sum().item()` in a loop (an int or a float,
    by input): the whole forward ran as Python ("result #0 of dycl.if has different
    types on the two branches: f64, i64"). Now a Python number the host holds."""

    def forward(self, x):
        best = -1
        for i in range(x.size(0)):
            if x[i].sum() > 0:
                best = x[i].sum().item()
        scale = 0
        if x[0, 0] > 0:
            scale = 0.5
        y = x[0] * 2 if best == -1 else x[-1] - 1
        return y, best, best + 1, scale, scale * 2


class NameFirstBoundInWhileTrue(nn.Module):
    """`h` first assigned inside `while True: ... break` and read after it: "'h' is
    first assigned inside the data-dependent loop" sent the rest of forward to Python."""

    def forward(self, x):
        steps = 0
        while True:
            h = torch.tanh(x)
            steps += 1
            if h.mean() > 0.2 or steps >= 5:
                break
            x = x + 0.3
        return h * 2, steps


class NameBoundOnlyIfTheWhileRuns(nn.Module):
    """`y` is bound only by iterations of a while loop that may run none: eager's
    UnboundLocalError where it is read, the value otherwise."""

    def forward(self, x):
        k = 0
        while x.sum() > 0 and k < 4:
            y = x * 2
            x = x - 1
            k += 1
        return y + 1


class ReversedRunTimeRanges(nn.Module):
    """reversed(range(n)) and enumerate/zip over run-time ranges with steps
    ("unsupported value", "enumerate/zip over a run-time range with a step")."""

    def forward(self, x):
        n = int((x > 0).sum())
        out = x[0]
        for i in reversed(range(x.size(0))):
            out = out * 0.5 + x[i]
        for i in reversed(range(1, n, 2)):
            out = out * 0.5 + x[i % 3] * i
        for i in reversed(range(n, -2, -3)):
            out = out - x[i % 3] * i
        for k, i in enumerate(reversed(range(n)), 1):
            out = out * 0.5 + x[i % 3] * k
        for k, (i, r) in enumerate(zip(range(1, 9, 3), x)):
            out = out + r * i * k
        return out


_SIGNS_3 = [(torch.full((3, 4), 1.0),), (torch.full((3, 4), -1.0),),
            (torch.tensor([[-0.1] * 4, [0.5] * 4, [-1.0] * 4]),), (torch.tensor([[1.0] * 4, [-0.5] * 4, [1.0] * 4]),)]
CASES["number_whose_type_depends_on_the_path"] = (NumberWhoseTypeDependsOnThePath, _SIGNS_3)
CASES["name_first_bound_in_while_true"] = (NameFirstBoundInWhileTrue, [  # 1, 2 and 5 iterations
    (torch.full((1, 4), 1.0),), (torch.full((1, 4), -0.1),), (torch.full((1, 4), -5.0),)])
CASES["name_bound_only_if_the_while_runs"] = (NameBoundOnlyIfTheWhileRuns, [
    (torch.full((1, 4), 0.1),), (torch.full((1, 4), 3.0),), (torch.full((1, 4), 0.6),), (torch.full((1, 4), -1.0),)])
CASES["reversed_run_time_ranges"] = (ReversedRunTimeRanges, _SIGNS_3 + [
    (torch.tensor([[1.0, 2.0, -1.0, 0.5]] * 3),), (torch.zeros(3, 4),)])


class UnusedHostValuesThatRaise(nn.Module):
    """Host values nothing reads whose computation raises in eager for some inputs
    (`int()` of NaN or inf, a math domain error, division by zero): dropped as dead
    code, the compiled model returned a value where eager raises."""

    def forward(self, x):
        s = x.sum().item()
        n = int(x[0])
        a = math.log(s + 10)
        r = 1 / s
        q = 7 // int(x[1] * 2)
        return x * 2


class NameBoundOnOnePathOnly(nn.Module):
    """`y` bound by one branch only, read after the join under another test: the
    read ran as a region that was not handed `y` (NameError where eager returns y,
    and where eager raises UnboundLocalError)."""

    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        if x.mean() > 0.5:
            return y + 1
        if x[0] > 0:
            return y
        return x


class ListPickedAtRunTime(nn.Module):
    """`(pos if c else neg).append(v)` runs as Python; the region did not hand back
    the lists it changed, so the code after it saw both empty."""

    def forward(self, x):
        pos, neg = [], []
        (pos if x[0] > 0 else neg).append(x[0])
        return len(pos), len(neg), torch.stack(pos + neg)


class IntsBeyondInt64(nn.Module):
    """Python ints have no bound: `n - 2 ** 63`, `n * 10 ** 19` wrapped around as i64
    constants (a silently different number)."""

    def forward(self, x):
        n = int(x.sum())
        big = 2 ** 70 if n > 0 else 5
        y = x * 2 if n * 10 ** 19 > 2 ** 64 else x - 1
        return y, n - 2 ** 63, n * 10 ** 19, n + 9223372036854775808, big, (1 << 65) - n


_PAIRS = [(torch.tensor([1.0, 2.0]),), (torch.tensor([float("nan"), 1.0]),), (torch.tensor([float("inf"), 1.0]),),
          (torch.tensor([-20.0, 1.0]),), (torch.tensor([0.5, -0.5]),), (torch.tensor([3.0, 0.2]),)]
CASES["unused_host_values_that_raise"] = (UnusedHostValuesThatRaise, _PAIRS)
CASES["name_bound_on_one_path_only"] = (NameBoundOnOnePathOnly, [
    (torch.tensor([1.0, 2.0]),), (torch.tensor([0.2, 0.1]),), (torch.tensor([1.0, -3.0]),), (torch.tensor([-1.0, -3.0]),)])
CASES["list_picked_at_run_time"] = (ListPickedAtRunTime, [(torch.tensor([1.0]),), (torch.tensor([-1.0]),)])
CASES["ints_beyond_int64"] = (IntsBeyondInt64, [(torch.tensor([4.0]),), (torch.tensor([-3.0]),), (torch.tensor([0.0]),)])


class ListGrownWhileIterated(nn.Module):
    """`for node in queue:` whose body appends to `queue` (a BFS expansion): Python's
    iterator sees the new items; the compiled loop visited only the first ones."""

    def forward(self, x):
        queue, leaves = [x], []
        for node in queue:
            if node.sum() > 0 and len(queue) < 5:
                queue.append(node - 1)
                queue.append(node - 2)
            else:
                leaves.append(node)
        todo = [x]
        for h in todo:
            if h.mean() > 3:
                break
            if len(todo) < 4:
                todo.append(h * 2)
        else:
            h = h - 1
        return len(queue), len(leaves), torch.stack(leaves).sum(0), h, len(todo)


class AliasedListsChangedByARegion(nn.Module):
    """`ref = groups[1]`, or `[[]] * 2`, then appends through a list picked by the
    data (a region): the region got copies that shared nothing, so `ref` stayed empty."""

    def forward(self, x):
        groups = [[] for _ in range(2)]
        ref = groups[1]
        buckets = [[]] * 2
        for i in range(x.shape[0]):
            groups[int(x[i] > 0)].append(i)
            buckets[int(x[i] > 0)].append(i)
        return len(ref), groups, len(buckets[0])


class WalrusTestBreaksAModuleLoop(nn.Module):
    """`if (c := layer(x).max()) > 0.5: break` over a ModuleList: an internal
    TypeError (copying the loop's continuation) sent forward to Python."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            if (c := layer(x).max()) > 0.5:
                break
        return c


class NamedTuplesInListsToARegion(nn.Module):
    """`x.max(-1)` results kept in a list and read by a region (`scores[k].indices`):
    they arrived as plain tuples (AttributeError)."""

    def forward(self, x):
        hyps = [[0], [1]]
        scores = [x.max(-1), (-x).max(-1)]
        k = int(scores[1].values > scores[0].values)
        hyps[k].append(int(scores[k].indices))
        return hyps


CASES["list_grown_while_iterated"] = (ListGrownWhileIterated, [
    (torch.tensor([1.5, 0.2]),), (torch.tensor([-1.0, 0.2]),), (torch.tensor([4.0, 4.0]),), (torch.tensor([0.1, 0.0]),)])
CASES["aliased_lists_changed_by_a_region"] = (AliasedListsChangedByARegion, [
    (torch.tensor([1.0, -1.0, 2.0]),), (torch.tensor([-1.0, -1.0, -2.0]),)])
CASES["walrus_test_breaks_a_module_loop"] = (WalrusTestBreaksAModuleLoop, [
    (torch.full((2, 4), v),) for v in (-3.0, -0.5, 0.0, 0.5, 3.0)])
CASES["named_tuples_in_lists_to_a_region"] = (NamedTuplesInListsToARegion, [
    (torch.tensor([0.5, -2.0, 1.0]),), (torch.tensor([3.0, 2.0, 1.0]),)])


class _ScaledGelu(torch.autograd.Function):
    """A custom autograd.Function as published code writes one (forward and backward,
    ctx attributes, several outputs)."""

    @staticmethod
    def forward(ctx, x, scale: float):
        ctx.scale = scale
        ctx.save_for_backward(x)
        y = F.gelu(x) * scale
        return y, (y > 0).sum()

    @staticmethod
    def backward(ctx, g, _):
        (x,) = ctx.saved_tensors
        return g * ctx.scale, None


def _scaled_sum(xs: List[torch.Tensor], k: int) -> torch.Tensor:
    out = torch.jit.annotate(List[torch.Tensor], [])
    for x in xs:
        out.append(x * k)
    return torch.stack(out).sum(0)


def _plus_one(x):
    return x + 1


with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # (torch.jit.script is; published code still uses it)
    _scripted_sum = torch.jit.script(_scaled_sum)
    _scripted_plus_one = torch.jit.script(_plus_one)


class AutogradFunctionAndScriptedHelpers(nn.Module):
    """`Fn.apply(...)` ran torch's base Function.apply (NotImplementedError: a region
    from there to the end of forward) and @torch.jit.script helpers, called or held
    as an attribute, were "not callable" (regions)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.post = _scripted_plus_one

    def forward(self, x):
        h, n = _ScaledGelu.apply(self.fc(x), 2.0)
        if n > 4:
            h = _scripted_sum([h, x], 3)
        return self.post(h)


CASES["autograd_function_and_scripted_helpers"] = (AutogradFunctionAndScriptedHelpers, [
    (torch.full((2, 4), v),) for v in (-3.0, 0.0, 3.0)] + [(torch.randn(2, 4, generator=torch.Generator().manual_seed(1)),)])


class ActivationCheckpointing(nn.Module):
    """`checkpoint(block, x, use_reentrant=False)` (timm, HF gradient checkpointing
    left on at inference) and `checkpoint_sequential`: "submodule cannot be used as
    a value" sent each call to Python."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.tail = nn.Sequential(nn.Linear(4, 4), nn.Tanh())

    def _scaled(self, x, k):
        return torch.relu(x) * k

    def forward(self, x):
        for block in self.blocks:
            x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
        x = torch.utils.checkpoint.checkpoint(self._scaled, x, 2, use_reentrant=False)
        x = torch.utils.checkpoint.checkpoint_sequential(self.tail, 2, x, use_reentrant=False)
        x = torch.utils.checkpoint.checkpoint_sequential(list(self.blocks), 1, x, use_reentrant=False)
        return x if x.sum() > 0 else -x


CASES["activation_checkpointing"] = (ActivationCheckpointing, [
    (torch.full((2, 4), v),) for v in (-3.0, 0.0, 3.0)] + [(torch.randn(2, 4, generator=torch.Generator().manual_seed(1)),)])


class ViewOfATransposeOnOnePath(nn.Module):
    """`x.view(...)` after a transpose taken on one path: eager raises there (not
    contiguous); the view became a region fed a contiguous copy and returned a value."""

    def forward(self, x):
        if x.mean() > 0.3:
            x = x.transpose(1, 2)
        return x.view(x.size(0), -1)


CASES["view_of_a_transpose_on_one_path"] = (ViewOfATransposeOnOnePath, [
    (torch.zeros(2, 4, 5),), (torch.ones(2, 4, 5),)])


class HeapAndBisectUpdates(nn.Module):
    """Library calls that change a list passed to them (a beam search's heap of
    finished hypotheses): heappush/heappop, bisect.insort and `list.append(l, v)` were
    compiled as if pure, on a copy, and the list kept its old contents."""

    def forward(self, x):
        finished = []
        heapq.heappush(finished, (x.sum().item(), [1, 2]))
        heapq.heappush(finished, (x.max().item(), [3]))
        scores = [x.sum().item(), 2.0, 1.0]
        first = heapq.heappop(scores)
        ordered = [1.0, 5.0]
        bisect.insort(ordered, x.mean().item())
        outs = [x]
        list.append(outs, x * 2)
        return finished, first, scores, ordered, len(outs), heapq.nsmallest(1, ordered)


CASES["heap_and_bisect_updates"] = (HeapAndBisectUpdates, [
    (torch.tensor([0.5, -2.0, 1.0]),), (torch.tensor([3.0, 2.0, 1.0]),)])


@dataclasses.dataclass
class _Tally:
    n: int = 0
    best: float = 0.0


class ChangesThroughDunderCalls(nn.Module):
    """`object.__setattr__(s, "n", 3)` (the frozen-dataclass idiom) was compiled as a
    pure call and `s.__setattr__("best", v)` ran in a region that kept its change;
    `list.insert(l, 0, v)` on a list a region made was dropped as dead code."""

    def forward(self, x):
        s = _Tally()
        object.__setattr__(s, "n", 3)
        s.__setattr__("best", x.max().item())
        kept = [t for t in x.tolist() if t > 0]  # (a list the run makes)
        list.insert(kept, 0, -1.0)
        list.extend(kept, [s.best])
        return x * s.n, s, kept, len(kept)


CASES["changes_through_dunder_calls"] = (ChangesThroughDunderCalls, [
    (torch.tensor([0.5, -2.0, 1.0]),), (torch.tensor([-3.0, -2.0, -1.0]),)])


def _index_points(points, idx):
    """PointNet++'s helper, as published."""
    B = points.shape[0]
    view_shape = list(idx.shape)
    view_shape[1:] = [1] * (len(view_shape) - 1)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch_indices = torch.arange(B, dtype=torch.long).view(view_shape).repeat(repeat_shape)
    return points[batch_indices, idx, :]


class ShapeListsEdited(nn.Module):
    """`shape = list(idx.shape); shape[1] = 1` where idx is computed in forward (its
    type known only after translation): the item assignment was a tensor's and the
    compiled model raised "'list' object has no attribute 'clone'"; `view_shape[1:] =
    [1] * k` (a slice of a list) was refused."""

    def forward(self, points, idx):
        idx = idx % points.shape[1]
        shape = list(idx.shape)
        shape[1] = 1
        first = points[:, :1, 0].view(shape)
        out = _index_points(points, idx)
        return out.sum(-1) if out.mean() > 0 else first


class IndexPoints(nn.Module):
    def forward(self, points, idx):
        out = _index_points(points, idx)
        return out.sum(-1) if out.mean() > 0 else -out.sum(-1)


CASES["index_points"] = (IndexPoints, [
    (torch.randn(2, 10, 3, generator=torch.Generator().manual_seed(s)), torch.arange(8).view(2, 4) * k)
    for s, k in ((0, 1), (1, 1), (2, 1))])
CASES["shape_lists_edited"] = (ShapeListsEdited, [
    (torch.randn(2, 10, 3, generator=torch.Generator().manual_seed(s)), torch.arange(8).view(2, 4) * k)
    for s, k in ((0, 1), (1, 3), (2, 5))])


class RemoveSelfLoops(nn.Module):
    """`edge_index[:, mask]` (a graph's self loops dropped): the host indexed a torch
    tensor with a backend's mask inside the index tuple (IndexError on TVM)."""

    def forward(self, x, edge_index):
        mask = edge_index[0] != edge_index[1]
        edge_index = edge_index[:, mask]
        return x[edge_index[0]].sum(0), edge_index


CASES["remove_self_loops"] = (RemoveSelfLoops, [
    (torch.randn(10, 4, generator=torch.Generator().manual_seed(s)),
     torch.randint(0, k, (2, 30), generator=torch.Generator().manual_seed(s))) for s, k in ((0, 10), (1, 3), (2, 1))])


class LegacyTensorTypes(nn.Module):
    """Pre-1.0 idioms: `isinstance(mask, torch.ByteTensor)` of an argument was False (the
    wrong branch: masked_fill then raised), `x.type() == 'torch.FloatTensor'` and
    `x.is_cuda` were run-time reads, `t.type(torch.LongTensor)` a SyntaxError in the
    generated graph (the whole forward eager)."""

    def forward(self, x, mask):
        if isinstance(mask, torch.ByteTensor):
            mask = mask.bool()
        if x.type() == "torch.FloatTensor" and not x.is_cuda:
            x = x * 2
        idx = x.argmax(1).type(torch.LongTensor)
        if isinstance(x, torch.DoubleTensor):
            x = x - 100
        return x.masked_fill(mask, 0.0), idx, isinstance(x, torch.FloatTensor)


CASES["legacy_tensor_types"] = (LegacyTensorTypes, [
    (torch.randn(2, 3, generator=torch.Generator().manual_seed(s)), torch.tensor([[1, 0, 0], [0, 1, 0]], dtype=torch.uint8))
    for s in range(2)])


class SparseTensorsInForward(nn.Module):
    """A sparse adjacency made in forward (pygcn / GNN code): the export densified it,
    `adj._nnz()` read 0 (a silent wrong answer), and a sparse result of Python code
    reached a sub-DNN (a crash). Sparse tensors are Python's."""

    def forward(self, x, edge_index):
        n = x.size(0)
        adj = torch.sparse_coo_tensor(edge_index, torch.ones(edge_index.size(1)), (n, n)).coalesce()
        mask = (x.sum(1, keepdim=True) > 0).float() * torch.ones(n, n)
        kept = mask.to_sparse()
        scaled = adj * 2
        return adj._nnz(), kept._nnz(), torch.sparse.mm(scaled, x), scaled.to_dense().sum()


class SparseArgument(nn.Module):
    """Kipf's pygcn layer: `torch.spmm(adj, x @ W)` with a sparse argument (a crash)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-1, 1, 12).view(4, 3))

    def forward(self, x, adj):
        return torch.spmm(adj, torch.mm(x, self.weight))


CASES["sparse_tensors_in_forward"] = (SparseTensorsInForward, [
    (torch.randn(4, 2, generator=torch.Generator().manual_seed(s)), e) for s, e in (
        (0, torch.tensor([[0, 1, 1, 2], [1, 2, 2, 3]])), (1, torch.tensor([[0, 0, 0, 0], [1, 1, 1, 1]])))])
CASES["sparse_argument"] = (SparseArgument, [
    (torch.randn(5, 4, generator=torch.Generator().manual_seed(s)),
     (torch.eye(5) + torch.diag(torch.ones(4), k)).to_sparse()) for s, k in ((0, 1), (1, -1))])


class ShapeListEditedOnOnePath(nn.Module):
    """A list of sizes edited on one path (`if ...: s[0] = 3`) and read after the
    join: shape inference ran both branches on one list, so the path that left it
    alone was compiled for the other's sizes ("the fallback region returned (2, 3);
    the code after it was compiled for (3, 2)")."""

    def forward(self, x):
        idx = torch.argsort(x, 1)[:, :3]
        s = list(idx.shape)
        t = s
        if x.sum() > 0:
            t[0] = 3
            t[1] = 2
        y = x[:, :3].reshape(s)
        return y.sum(0) * 2, s


CASES["shape_list_edited_on_one_path"] = (ShapeListEditedOnOnePath, [
    (-torch.ones(2, 3),), (torch.tensor([[1.0, -1.0, 2.0], [0.5, 0.5, 0.5]]),),
    (torch.full((2, 3), float("nan")),)])


class SwappedShapeItems(nn.Module):
    """`s[0], s[1] = s[1], s[0]` on `s = list(idx.shape)` (a list, its type known only
    after translation) was refused as "an in-place update from a view of the same
    tensor"."""

    def forward(self, x):
        idx = torch.argsort(x, 1)[:, :3]
        s = list(idx.shape)
        s[0], s[1] = s[1], s[0]
        y = x.reshape(s)
        return y.sum(0) * 2 if y.mean() > 0 else y.sum(1)


CASES["swapped_shape_items"] = (SwappedShapeItems, [
    (torch.tensor([[1.0, -1.0, 2.0], [0.5, 0.5, 0.5]]),), (-torch.ones(2, 3),)])


class LoopSizedByAnItem(nn.Module):
    """A CEM planner's horizon read from data (`H = int(n.item())`) sizing a tensor a
    loop carries: typing the loop's region, a run on stand-ins (H = 2, the carried
    size u0) made torch assume `u0 == 2` in the shape environment every fake tensor
    reads, so the code after it was compiled for 2 whatever the example said."""

    def forward(self, n):
        H = int(n.item())
        mean = torch.zeros(H)
        for _ in range(2):
            acts = mean + torch.ones(4, H)
            mean = acts.mean(0)
        return mean


class TryInALoopSizedByAnItem(nn.Module):
    """As LoopSizedByAnItem, its update in a `try` (a region typed on real stand-ins,
    whose unrelated sizes took the `except` path on the other run)."""

    def forward(self, n):
        H = int(n.item())
        mean = torch.zeros(H)
        for _ in range(2):
            try:
                acts = mean + torch.ones(4, H)
            except RuntimeError:
                acts = None
            mean = acts.mean(0)
        return mean


CASES["loop_sized_by_an_item"] = (LoopSizedByAnItem, [(torch.tensor(3),), (torch.tensor(5),), (torch.tensor(1),)])
CASES["try_in_a_loop_sized_by_an_item"] = (TryInALoopSizedByAnItem, [
    (torch.tensor(3),), (torch.tensor(5),), (torch.tensor(1),)])


class DefaultsOfADecoratedForward(nn.Module):
    """`@torch.no_grad()` on forward (nanoGPT's generate): its wrapper takes *args and
    has no defaults of its own, so `temperature` left to its default was unbound
    ("name 'temperature' is not defined" at every call)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @torch.no_grad()
    def forward(self, x, temperature: float = 1.0, *, top: int = 2):
        logits = self.fc(x) / temperature
        logits[logits < logits.topk(top, -1).values[:, -1:]] = -float("inf")
        return logits if logits.max() > 0 else -logits


CASES["defaults_of_a_decorated_forward"] = (DefaultsOfADecoratedForward, [
    (torch.randn(2, 4, generator=torch.Generator().manual_seed(s)),) for s in range(3)] + [
    (torch.randn(2, 4), 0.5)])


class ParametersInContainers(nn.Module):
    """nn.ParameterList / nn.ParameterDict iterated, zipped, indexed, counted and
    tested with `in` (a hypernetwork's per-layer weights): was "zip over a run-time
    value" and ran as Python."""

    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList([nn.Parameter(torch.randn(4, 4)) for _ in range(3)])
        self.bs = nn.ParameterList([nn.Parameter(torch.randn(4)) for _ in range(3)])
        self.scales = nn.ParameterDict({"a": nn.Parameter(torch.randn(4)), "b": nn.Parameter(torch.randn(4))})

    def forward(self, x, k: int = 1):
        for w, b in zip(self.ws, self.bs):
            x = torch.tanh(x @ w + b)
            if x.sum() > 0:
                x = x * 2
        for name, s in self.scales.items():
            x = x + s if name == "a" else x - s
        if "b" in self.scales and x.mean() > 0:
            x = x * self.bs[k]
        y = self.bs[-1] * len(self.ws)
        for i, w in enumerate(self.ws):
            if w.sum() > 0:
                y = y + i
        return x, y + sum(b.sum() for b in self.bs)


CASES["parameters_in_containers"] = (ParametersInContainers, [
    (torch.randn(2, 4, generator=torch.Generator().manual_seed(s)),) for s in range(4)] + [
    (torch.full((2, 4), float("nan")), 2), (-torch.ones(2, 4) * 9, 0), (torch.ones(2, 4) * 9, -1)])


class FStringsOverRunTimeValues(nn.Module):
    """f-strings over run-time values (a `raise`'s message with a count read from data,
    a length, a tensor's text with a format spec, a name chosen by a
    branch) are formatted on the host: were refused as "f-string over a run-time value"."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 4)

    def forward(self, x, lens):
        assert x.dim() == 3, f"expected 3D input, got {x.dim()}D"
        if torch.isnan(x).any():
            raise ValueError(f"{int(torch.isnan(x).sum())} non-finite inputs in {type(self).__name__}")
        if lens.max() > x.size(1):
            raise ValueError(f"length {int(lens.max())} exceeds {x.size(1)}: {lens.tolist()!r} {x.sum():.3f}")
        y = self.lin(x)
        name = f"{y.shape[-1]}d-{'big' if y.mean() > 0 else 'small'}"
        return y, name, f"{float(y.max()):>8.2f}|{len(lens)}|{y.sum()!s:.9}|{lens[0]}"


CASES["f_strings_over_run_time_values"] = (FStringsOverRunTimeValues, [
    (torch.randn(2, 5, 6, generator=torch.Generator().manual_seed(s)), torch.tensor([3, 5])) for s in range(3)] + [
    (torch.randn(2, 5, 6), torch.tensor([3, 7])), (torch.full((2, 5, 6), float("nan")), torch.tensor([1, 2])),
    (-torch.ones(2, 5, 6), torch.tensor([1, 2])), (torch.ones(2, 5, 6), torch.tensor([4, 4]))])


class ComplexTensors(nn.Module):
    """Complex tensors: an STFT's magnitude (speech front ends) and rotary embeddings
    as a complex buffer made by `torch.polar` (Meta's Llama `freqs_cis`), a complex
    result returned: forward ran as Python ("unsupported tensor dtype torch.complex64")."""

    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(16))
        freqs = 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8))
        self.register_buffer("freqs_cis", torch.polar(torch.ones(16, 4), torch.outer(torch.arange(16.0), freqs)))
        self.lin = nn.Linear(9, 8)

    def forward(self, wav, start: int = 0):
        spec = torch.stft(wav, 16, 4, window=self.window, return_complex=True)
        mag = spec.abs().clamp(min=1e-5).log()
        if mag.mean() > 0:
            mag = mag * 2
        x = self.lin(mag.transpose(1, 2))
        T = x.shape[1]
        xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        out = torch.view_as_real(xc * self.freqs_cis[start:start + T]).flatten(2)
        if out.abs().max() > 3:
            out = out / out.abs().max()
        return out, xc.conj()


CASES["complex_tensors"] = (ComplexTensors, [
    (torch.randn(1, 40, generator=torch.Generator().manual_seed(s)) * 10 ** (s - 1),) for s in range(3)] + [
    (torch.randn(1, 40), 2), (torch.full((1, 40), float("nan")),)])


class StarSizesOfComputedTensors(nn.Module):
    """`h.view(*h.shape[:-1], heads, d)` on a computed tensor (its sizes known only
    after translation), with sizes before and after the starred part: was refused as
    "*args over a run-time value"."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 8)

    def forward(self, x):
        h = self.lin(x)
        q = h.view(*h.shape[:-1], 2, 4)
        k = h.reshape(h.size(0), *h.shape[1:-1], 4, 2)
        z = torch.zeros(*h.shape[:2], 3)
        e = h.new_ones(2, *h.shape[1:])
        if q.sum() > 0:
            return q.transpose(-1, -2).reshape(*q.shape[:-2], -1) + k.flatten(-2), z.shape, e.sum()
        return k.expand(2, *k.shape).sum(0), z.sum(), e.shape


CASES["star_sizes_of_computed_tensors"] = (StarSizesOfComputedTensors, [
    (torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(s)),) for s in range(4)] + [
    (torch.full((2, 3, 4), float("nan")),), (torch.randn(1, 5, 4),)])


class SizesFromHostInts(nn.Module):
    """Tensors sized by ints read from data (`torch.arange(n)`, `x.narrow(0, 0, n)`,
    `torch.zeros(n, 3)`, `x.repeat(n)`), then computed on: SpeechBrain's CTC decoding
    (`seq.narrow(0, 0, round(rel_len * T))`) and ESPnet's (`best[b, :hlens[b]]`, a 0-d
    tensor as a slice bound) ran as Python ("the result's type depends on a run-time
    value", "GuardOnDataDependentSymNode")."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, x, rel, hlens):
        probs = self.proj(x).softmax(-1)
        T = probs.shape[1]
        outs = []
        for seq, r in zip(probs, rel):
            n = int(torch.round(r * T))
            scores, pred = torch.max(seq.narrow(0, 0, n), dim=1)
            outs.append((pred.tolist(), scores.sum()))
        best = probs.argmax(-1)
        hyps = [torch.unique_consecutive(best[b, :hlens[b]]).tolist() for b in range(best.size(0))]
        k = int((x > 0).sum())
        grid = torch.arange(k) * 2 + torch.zeros(k, 3).sum(1)
        return outs, hyps, grid, x[0, 0].repeat(k).amax(), probs.new_ones(k).cumsum(0)


CASES["sizes_from_host_ints"] = (SizesFromHostInts, [
    (torch.randn(2, 5, 4, generator=torch.Generator().manual_seed(s)), torch.tensor([1.0, 0.5]), torch.tensor([5, 2]))
    for s in range(3)] + [
    (torch.randn(2, 5, 4), torch.tensor([0.0, 0.3]), torch.tensor([0, 5])),
    (-torch.ones(2, 5, 4), torch.tensor([0.6, 1.0]), torch.tensor([1, 1])),
    (torch.randn(2, 5, 4), torch.tensor([-0.5, 1.0]), torch.tensor([3, 3])),
    (torch.full((2, 5, 4), float("nan")), torch.tensor([1.0, 1.0]), torch.tensor([4, 5]))])


class LossModulesMadeInForward(nn.Module):
    """Hugging Face heads make their loss in forward (`loss_fct = CrossEntropyLoss();
    loss_fct(logits.view(-1, n), labels.view(-1))`, MSELoss for one label): "creating
    a module inside forward" ran the head as Python."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.reg = nn.Linear(4, 1)

    def forward(self, x, labels, target):
        logits = self.fc(x)
        loss_fct = nn.CrossEntropyLoss(ignore_index=-1, label_smoothing=0.1)
        loss = loss_fct(logits.view(-1, 3), labels.view(-1))
        mse = nn.MSELoss(reduction="sum")(self.reg(x).view(-1), target.view(-1))
        return loss, mse, nn.BCEWithLogitsLoss()(logits, torch.sigmoid(logits).detach())


CASES["loss_modules_made_in_forward"] = (LossModulesMadeInForward, [
    (torch.randn(2, 4), torch.tensor([0, 2]), torch.tensor([0.5, -1.0])),
    (torch.randn(2, 4), torch.tensor([-1, 1]), torch.tensor([2.0, 3.0])),
    (torch.full((2, 4), float("nan")), torch.tensor([1, 1]), torch.tensor([0.0, float("inf")]))])


class AnnotatedTransformerIdioms(nn.Module):
    """The Annotated Transformer's attention (`del query, key, value` after use) and
    greedy_decode (`ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)`,
    then `torch.zeros(1, 1).type_as(src.data).fill_(next_word)` per step): "del
    statement" and "in-place tensor method 'fill_'" ran forward as Python."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)
        self.out = nn.Linear(4, 6)

    def forward(self, src, start_symbol: int = 1):
        ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
        for _ in range(3):
            h = self.emb(torch.cat([src, ys], dim=1))
            query, key = self.q(h), self.k(h)
            h = (query @ key.transpose(-2, -1)).softmax(-1) @ h
            del query, key
            _, next_word = torch.max(self.out(h[:, -1]), dim=1)
            next_word = next_word.data[0]
            ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
            if next_word == 5:
                break
        return ys


CASES["annotated_transformer_idioms"] = (AnnotatedTransformerIdioms, [
    (torch.tensor([[2, 3]]),), (torch.tensor([[5, 5]]),), (torch.tensor([[0, 4]]),), (torch.tensor([[1, 1]]),)])


class TopTwoGatingWithoutDrops(nn.Module):
    """DeepSpeed's top-2 gating with `drop_tokens=False`: the capacity is
    `torch.max(exp_counts)`, a 0-d tensor given to `F.one_hot` as `num_classes`, and
    `gates1_s /= denom_s` updates an einsum's result in place. Shape inference failed
    on the data-dependent num_classes (forward ran as Python), and an einsum of two
    operands was taken for a possible view of its first (a region); and
    `num_experts = int(gates.shape[1])` reached the sub-DNN as a run-time int its
    export could not take as one_hot's classes (no backend built it)."""

    def __init__(self):
        super().__init__()
        self.wg = nn.Linear(4, 3, bias=False)

    def forward(self, x):
        gates = F.softmax(self.wg(x), dim=1)
        num_experts = int(gates.shape[1])
        mask1 = F.one_hot(torch.argmax(gates, dim=1), num_classes=num_experts)
        mask2 = F.one_hot(torch.argmax(gates.masked_fill(mask1.bool(), float("-inf")), dim=1), num_classes=num_experts)
        locations1 = torch.cumsum(mask1, dim=0) - 1
        locations2 = torch.cumsum(mask2, dim=0) - 1 + torch.sum(mask1, dim=0, keepdim=True)
        capacity = torch.max(torch.sum(mask1 + mask2, dim=0))
        gates1_s = torch.einsum("se,se->s", gates, mask1.float())
        gates2_s = torch.einsum("se,se->s", gates, mask2.float())
        denom_s = torch.clamp(gates1_s + gates2_s, min=torch.finfo(gates.dtype).eps)
        gates1_s /= denom_s
        gates2_s /= denom_s
        loc1 = F.one_hot(torch.sum(locations1 * mask1, dim=1), num_classes=capacity).float()
        loc2 = F.one_hot(torch.sum(locations2 * mask2, dim=1), num_classes=capacity).float()
        combine = torch.einsum("s,se,sc->sec", gates1_s, mask1.float(), loc1) + \
            torch.einsum("s,se,sc->sec", gates2_s, mask2.float(), loc2)
        dispatched = torch.einsum("sec,sm->ecm", combine.bool().type_as(x), x)
        return torch.einsum("sec,ecm->sm", combine, dispatched.tanh()), capacity


def _rows_to(expert, n=6):
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(expert)) * 0.1
    x[:, expert % 4] += 5.0
    return (x,)


CASES["top_two_gating_without_drops"] = (TopTwoGatingWithoutDrops, [
    (torch.randn(6, 4, generator=torch.Generator().manual_seed(1)),), _rows_to(0), _rows_to(1), _rows_to(2, 3),
    (torch.randn(5, 4, generator=torch.Generator().manual_seed(2)) * 4,)])


class UnpackingATolist(nn.Module):
    """`a, b = x.nonzero()[:, 0].tolist()`, directly and through `tuple(...)` and a
    helper: another count is eager's ValueError (it gave a value for 3 and an
    IndexError for 0, probe 25a)."""

    def _where(self, x):
        return x.nonzero()[:, 0].tolist()

    def forward(self, x):
        a, b = x.nonzero()[:, 0].tolist()
        c, d = tuple(x.nonzero()[:, 0].tolist())
        e, f = self._where(x)
        return x[a] + x[b] + c * d + e * f


CASES["unpacking_a_tolist"] = (UnpackingATolist, [
    (torch.tensor([0.0, 1.0, 0.0, 2.0]),), (torch.tensor([1.0, 1.0, 1.0, 0.0]),), (torch.zeros(4),)])


class StarredUnpacking(nn.Module):
    """`b, *rest = x.shape`, `first, *mid, last = x` (rows), `*init, tail = [1, 2, 3]`: the
    starred name is a list (it ran as Python: "assignment target Starred", or "cannot unpack 3
    values into 2 names" for `b, *rest = x.shape`, probe 25a)."""

    def forward(self, x):
        b, *rest = x.shape
        first, *mid, last = x
        *init, tail = [1, 2, 3]
        return x * b + sum(rest) + first + last + len(mid) + tail + len(init), rest, mid


CASES["starred_unpacking"] = (StarredUnpacking, [(torch.randn(4, 3),), (torch.randn(4, 3) * 5,)])


class TensorProperties(nn.Module):
    """`@property` getters that give a view of a parameter or buffer (`self.lin.weight[0]`,
    `self.table.t()`): a new tensor object on each read, which was folded into a constant
    and then guarded as "changed after the compile" on every call (run as eager, probe 25a)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("table", torch.arange(16.0).reshape(4, 4))

    @property
    def first_row(self):
        return self.lin.weight[0]

    @property
    def table_t(self):
        return self.table.t()

    def forward(self, x):
        y = x @ self.table_t + self.first_row
        if y.sum() > 0:
            return y * self.first_row
        return y


CASES["tensor_properties"] = (TensorProperties, [(torch.randn(3, 4),), (-torch.ones(3, 4) * 9,)])


class LegacyNewThenFill(nn.Module):
    """HF's greedy search: `unfinished = input_ids.new(b).fill_(1)`, updated by the
    tokens each step picks, and a stop once every row is done (the whole forward ran as
    Python: "in-place tensor method 'fill_'", probe 26a)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.head = nn.Linear(8, 10)

    def forward(self, input_ids):
        unfinished = input_ids.new(input_ids.shape[0]).fill_(1)
        for _ in range(4):
            logits = self.head(self.emb(input_ids).mean(1))
            nxt = torch.argmax(logits, dim=-1)
            nxt = nxt * unfinished + 0 * (1 - unfinished)
            input_ids = torch.cat([input_ids, nxt[:, None]], dim=-1)
            unfinished = unfinished.mul((nxt != 3).long())
            if unfinished.max() == 0:
                break
        return input_ids


CASES["legacy_new_then_fill"] = (LegacyNewThenFill, [
    (torch.tensor([[1, 2], [4, 5]]),), (torch.tensor([[3, 3], [0, 9]]),), (torch.tensor([[7, 1], [2, 2]]),)])


class NamedTupleOfTheClass(nn.Module):
    """A namedtuple made in the class body, built as `self.Out(...)` and as
    `NamedTupleOfTheClass.Out(...)` (ran as Python: "cannot read the Python source of
    ...Out", then "unknown function", probe 26a)."""

    Out = collections.namedtuple("Out", "logits exit_layer confidence")

    def __init__(self):
        super().__init__()
        self.layer = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.heads = nn.ModuleList([nn.Linear(4, 3) for _ in range(3)])

    def forward(self, x):
        for i, (layer, head) in enumerate(zip(self.layer, self.heads)):
            x = torch.relu(layer(x))
            logits = head(x)
            confidence = logits.softmax(-1).max()
            if confidence > 0.5:
                return self.Out(logits, i, confidence)
        return NamedTupleOfTheClass.Out(logits, len(self.layer), confidence)


CASES["namedtuple_of_the_class"] = (NamedTupleOfTheClass, [
    (torch.randn(1, 4, generator=torch.Generator().manual_seed(s)) * k,) for s, k in ((0, 0.5), (1, 8.0), (5, 3.0))])


class MembershipOfRunTimeValues(nn.Module):
    """`in` / `not in` with a run-time value on the left: a token id in a tuple of stop
    ids, a float in a list (NaN is in none), an int in a set literal, a tensor in a tuple
    of numbers (`bool(t == c)`: eager's error for a two-element tensor), and run-time
    numbers on the right (`v in (v, 1)` holds for a NaN: identity first). All ran as
    Python: "'In' comparison on a run-time value" (probe 26a)."""

    def forward(self, x):
        tok = x.argmax()
        if tok.item() in (2, 3):
            x = x * 2
        if x[0].item() not in [0.5, float("nan"), -1.0]:
            x = x + 1
        if int(x.sum() > 0) in {1}:
            x = -x
        v = x[1].item()
        if v in (v, 7) and x.max() in (x[2].item(), 8.0):
            x = x * 3
        if x[:1] in (1, 4):
            return x * 0
        return x - 1


CASES["membership_of_run_time_values"] = (MembershipOfRunTimeValues, [
    (torch.tensor([0.1, 0.2, 3.0, 0.0, -5.0]),), (torch.tensor([-0.5, 0.0, 0.0, -9.0, -1.0]),),
    (torch.tensor([0.5, 0.0, 0.0, 9.0, 0.0]),), (torch.tensor([-1.0, -2.0, 9.0, -3.0, -4.0]),),
    (torch.tensor([float("nan"), float("nan"), 0.0, 0.0, 0.0]),), (torch.tensor([-2.0, 0.0, 0.0, 0.0, 0.0]),),
    (torch.tensor([-5.0, 0.0, -1.0, 0.0, 0.0]),), (torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0]),)])


class MembershipOfATwoElementTensor(nn.Module):
    def forward(self, x):
        if x in (0, 3):  # eager: "Boolean value of Tensor with more than one value is ambiguous"
            return x + 1
        return x


CASES["membership_of_a_two_element_tensor"] = (MembershipOfATwoElementTensor, [
    (torch.tensor([3.0]),), (torch.tensor([1.0]),), (torch.tensor([0.0, 3.0]),)])


class ZipOfChunksAndExperts(nn.Module):
    """GShard's `for chunk, expert in zip(dispatched.chunk(E), self.experts)` and
    `for i, part in enumerate(torch.split(x, sizes), 1)` picking `self.experts[i - 1]`;
    `x.chunk(4)` of three rows gives three chunks, so zip stops before the fourth expert;
    a break on a run-time test. Ran as Python: "zip over a run-time value together with
    one that is not a tensor, a list or a range" (probe 26a)."""

    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])
        self.names = ["a", "b", "c", "d"]

    def forward(self, x):
        outs = []
        for chunk, expert, name in zip(x.chunk(4, dim=0), self.experts, self.names):
            h = expert(chunk)
            outs.append(h if name != "b" else -h)
            if h.sum() > 3:
                break
        parts = []
        for i, part in enumerate(torch.split(x, [1, 2], dim=0), 1):
            parts.append(self.experts[i - 1](part) * i)
        return torch.cat(outs), torch.cat(parts), len(outs)


CASES["zip_of_chunks_and_experts"] = (ZipOfChunksAndExperts, [
    (torch.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0]]),),
    (torch.full((3, 4), 4.0),), (torch.full((3, 4), -4.0),), (torch.full((3, 4), float("nan")),)])


class LoopOverSplitParts(nn.Module):
    """`for c in torch.split(x, 2)` whose body asks each part's size (`c.numel() == 2`:
    the last part is shorter), and `for c in x.chunk(4)` (fewer parts than 4 for short
    inputs): unrolled to the part count the call and x's static size give (ran as
    Python: "for loop over a run-time value", probe 27a)."""

    def forward(self, x):
        chunks = torch.split(x, 2)
        acc = []
        for c in chunks:
            if c.numel() == 2:
                acc.append(c.sum())
            else:
                acc.append(c[0] * 10)
        for c in x.chunk(4):
            acc.append(c.mean() if c.sum() > 0 else -c.max())
        return torch.stack(acc), len(acc)


CASES["loop_over_split_parts"] = (LoopOverSplitParts, [
    (torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]),), (torch.tensor([-1.0, 2.0, -3.0, 4.0, -5.0]),),
    (torch.tensor([1.0, 2.0, 3.0]),), (torch.tensor([7.0]),), (torch.tensor([1.0, -2.0, 3.0, 4.0]),)])
