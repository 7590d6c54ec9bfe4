"""Models in the styles of published code that the frontend cannot (yet) translate
everywhere: the untranslatable parts run as the model's own Python (fallback
regions), the rest is compiled. Each is checked against eager on every path,
including what it printed and the module's state after each call."""

import collections
import dataclasses
import enum
import functools
import itertools
import random
import types

import torch
import torch.nn.functional as F
from torch import nn


class PrintAndCount(nn.Module):
    """Logs from forward and counts its calls on the module; a branch reads the count."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        h = self.fc(x)
        print("mean", round(float(h.mean()), 4))
        self.calls += 1
        if self.calls % 2 == 0:
            return torch.relu(h)
        return h - 1


class SavedActions(nn.Module):
    """A policy keeps what it chose on the module (REINFORCE-style code)."""

    def __init__(self):
        super().__init__()
        self.policy = nn.Linear(4, 2)
        self.saved_actions = []

    def forward(self, x):
        probs = F.softmax(self.policy(x), dim=-1)
        action = probs.argmax(dim=-1)
        self.saved_actions.append(action)
        if probs[0, 0] > 0.5:
            return probs * 2
        return probs


class TryAroundReturn(nn.Module):
    """`try` around an early exit, as in published early-exit code."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 3)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        try:
            if h.sum() > 0:
                return self.head(h)
        except RuntimeError:
            pass
        return self.head(-h)


class LoopWithLogging(nn.Module):
    """One statement the frontend cannot translate inside a layer loop."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.relu(layer(x))
            with torch.no_grad():
                print(f"layer {i}: {float(x.sum()):.4f}")
        return x


def _doubled(module, args, out):
    return out * 2


class Untranslatable(nn.Module):
    """A forward hook on the model itself runs around all of forward: it runs whole, as eager."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_forward_hook(_doubled)

    def forward(self, *args, **kwargs):
        x = args[0]
        return self.fc(x) if x.sum() > 0 else -x


class ReboundForward(nn.Module):
    """`self.forward = self.<method>` in `__init__` (the DyCL artifact's idiom)."""

    def __init__(self, pooling=True):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.block = Block()
        if pooling:
            self.forward = self.forward_w_pooling

    def forward(self, x):
        return self.fc(x)

    def forward_w_pooling(self, x):
        h = self.block(self.fc(x))
        return h.amax(dim=-1, keepdim=True) if h.sum() > 0 else h


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.forward = self.only_forward

    def forward(self, x):
        return x

    def only_forward(self, x):
        return torch.relu(self.fc(x)) + 1


class RaiseOnBadInput(nn.Module):
    """A run-time check that raises eager's exception."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.abs().max() > 3:
            raise ValueError("input out of range")
        return self.fc(x)


class InputUpdatedInPlace(nn.Module):
    def forward(self, x):
        x += 1
        return x * 2


class ViewUpdatedInLoop(nn.Module):
    """A write through a view inside a loop reaches its base, as in eager."""

    def forward(self, x):
        r = x[0]
        for i in range(2):
            r += 1
        return r + x[0]


class NoneOnSomePaths(nn.Module):
    def forward(self, y):
        if y.sum() > 0:
            k = 1
        else:
            k = None
        if k is not None:
            return y, k
        return y * 0, -1


class TopkRenormalised(nn.Module):
    """A router's `w /= w.sum()` on topk's values (which share no storage with its indices)."""

    def forward(self, x):
        w, idx = torch.topk(x, 2, dim=-1)
        w /= w.sum(-1, keepdim=True)
        return w, idx


class DataAttribute(nn.Module):
    """`.data` in older published code reads as `detach()`."""

    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 5)

    def forward(self, x):
        topv, topi = self.out(x).data.topk(1)
        return topi


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)
        self.big = 0

    def forward(self, x):
        y = self.l(x)
        if y.max() > 0:
            self.big += 1
        return y


class SubmoduleStateInWith(nn.Module):
    """A submodule's counter, changed by a call inside `with`, read by the parent."""

    def __init__(self):
        super().__init__()
        self.c = Counter()

    def forward(self, x):
        with torch.no_grad():
            y = self.c(x)
        if self.c.big > 1:
            y = y * 0
        return y, self.c.big


class HookOnSequential(nn.Module):
    def __init__(self):
        super().__init__()
        self.blk = nn.Sequential(nn.Linear(4, 4))
        self.blk.register_forward_hook(_negate)
        self.fc = nn.Linear(4, 4)
        self.fc.register_forward_hook(_count)

    def forward(self, x):
        return self.fc(self.blk(x))


def _negate(module, inputs, output):
    return -output


def _count(module, inputs, output):
    module.calls = getattr(module, "calls", 0) + 1


class TryReturnShapes(nn.Module):
    """The except path returns another shape than the others (never taken)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        h = self.a(x)
        try:
            if h.sum() > 0:
                return self.b(h)
            h = h * 2
        except RuntimeError as e:
            print("err", e)
            return h
        return self.b(torch.relu(h)) - 1


class ReceiverNotSelf(nn.Module):
    def __init__(me):
        super().__init__()
        me.l = nn.Linear(4, 4)

    def forward(me, x):
        if x.sum() > 0:
            return me.l(x)
        return me.l(x) * 2


CALLS = 0


class GlobalCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x, cache=[]):  # noqa: B006 (the shared default is the point)
        global CALLS
        CALLS += 1
        cache.append(1)
        h = self.l(x)
        if CALLS > 2:
            h = h * 2
        return h, CALLS, len(cache)


@dataclasses.dataclass
class Config:
    hidden: int = 4
    is_decoder: bool = False
    scale: float = 0.5
    act: str = "relu"


class LibraryBase(nn.Module):
    """A model library's base class: its helper reads the config object."""

    def get_extended_mask(self, h):
        if self.config.is_decoder:
            return torch.tril(h)
        return h * self.config.scale


class ConfigObjects(LibraryBase):
    """A config dataclass, a SimpleNamespace and a dict of constants, read everywhere:
    folded at compile time (nothing runs as Python)."""

    def __init__(self):
        super().__init__()
        self.config = Config()
        self.fc = nn.Linear(self.config.hidden, self.config.hidden)
        self.opts = types.SimpleNamespace(threshold=0.1, extra={"k": 2})
        self.table = {"a": 1.5, "b": -1.0}

    def forward(self, x):
        h = self.get_extended_mask(self.fc(x))
        if getattr(self.config, "use_cache", False):
            h = h + 1
        if h.mean() > self.opts.threshold:
            h = h * self.table["a"] * self.opts.extra["k"]
        return torch.relu(h) if self.config.act == "relu" else h


class ConfigWrittenInForward(nn.Module):
    """forward counts on its config object: those reads follow the run-time value."""

    def __init__(self):
        super().__init__()
        self.config = types.SimpleNamespace(steps=0, limit=2)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        self.config.steps += 1
        h = self.fc(x)
        if self.config.steps > self.config.limit:
            return h * 0
        return h


def _inputs(shape=(1, 4), scale=1.0, seeds=8):
    return [(torch.randn(*shape, generator=torch.Generator().manual_seed(s)) * scale,) for s in range(seeds)]


class CallerTensorUpdatedInHelperBranch(nn.Module):
    """A helper updates, on some paths only, a tensor its caller also holds (and
    appends to the caller's list): the call runs as Python, both names see it."""

    def _bump(self, t, outs, c):
        if c.sum() > 0:
            t += 1
            outs.append(c)
        return t * 2

    def forward(self, x):
        h = x * 1
        outs = []
        y = self._bump(h, outs, x)
        return h, y, outs



class BufferUpdatedInForward(nn.Module):
    """A step counter kept in a buffer and updated by forward (ActNorm-style state):
    module state the host reads and updates in place, not a constant of a sub-DNN."""

    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(1))
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        self.steps.add_(1)
        return self.fc(x) * self.steps


class WordsBeforeBreak(nn.Module):
    """A greedy decoder's words: a dict lookup (run as Python) on one path, a constant
    appended before `break` on the other."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.index2word = {0: "a", 1: "EOS", 2: "b", 3: "c"}

    def forward(self, x):
        words = []
        for _ in range(4):
            x = self.fc(x)
            top = x.argmax().item()
            if top == 1:
                words.append("<EOS>")
                break
            words.append(self.index2word[top])
        return words


class StatefulDecoder(nn.Module):
    """Tacotron-style inference: an initializer puts the recurrent state on the
    module, each decode step reads and reassigns it, a counter on the module
    counts the steps; `while True` ends at a stop gate or, with a printed
    warning, when the list of frames reaches its maximum length."""

    def __init__(self, n=8):
        super().__init__()
        self.n = n
        self.cell = nn.LSTMCell(n, n)
        self.proj = nn.Linear(n, n)
        self.gate = nn.Linear(n, 1)
        self.max_decoder_steps = 5
        self.steps_taken = 0

    def initialize_decoder_states(self, memory):
        B = memory.size(0)
        self.attention_hidden = memory.new_zeros(B, self.n)
        self.attention_cell = memory.new_zeros(B, self.n)
        self.context = memory.mean(1)

    def decode(self, frame):
        self.attention_hidden, self.attention_cell = self.cell(
            frame + self.context, (self.attention_hidden, self.attention_cell))
        out = self.proj(self.attention_hidden)
        # the stop logit grows with the steps taken so far (state read back from the module)
        return out, self.gate(self.attention_hidden) * 0.1 + self.context.sum() * 0.5 * (self.steps_taken + 1) - 1

    def forward(self, memory):
        self.initialize_decoder_states(memory)
        frame = memory[:, 0]
        outputs = []
        self.steps_taken = 0
        while True:
            frame, stop = self.decode(frame)
            outputs += [frame]
            self.steps_taken += 1
            if torch.sigmoid(stop.data) > 0.5:
                break
            elif len(outputs) == self.max_decoder_steps:
                print("Warning! Reached max decoder steps")
                break
        return torch.stack(outputs, 1)


class LayerCounter(nn.Module):
    """An early-exit encoder counts the layers it ran on itself and records the
    input dtype (routers do); the exit is inside a submodule's loop."""

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
            self.inference_layers_num = 0

        def forward(self, h):
            for layer in self.layers:
                h = torch.tanh(layer(h))
                self.inference_layers_num += 1
                if h.abs().max() > 0.9:
                    return h, True
            return h, False

    def __init__(self):
        super().__init__()
        self.encoder = self.Encoder()
        self.input_dtype = None

    def forward(self, x):
        self.input_dtype = x.dtype
        self.encoder.inference_layers_num = 0
        h, exited = self.encoder(x * 3)
        if exited:
            return h * 2, self.encoder.inference_layers_num
        return h, self.encoder.inference_layers_num


class StateOnSomePaths(nn.Module):
    """An attribute written on one path only, then read: its value comes from the
    module (this call's write, or an earlier call's)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.last_positive = torch.zeros(1, 4)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:
            self.last_positive = h
        return h + self.last_positive


class SparseMoeBlock(nn.Module):
    """A sparse mixture-of-experts block as a popular model library writes it: top-k
    routing, a per-expert loop over `torch.where(expert_mask[e])`, a gather of the
    selected tokens and `index_add_` back; each expert sees a data-dependent number
    of tokens (a dynamic dimension)."""

    class Expert(nn.Module):
        def __init__(self, d, f):
            super().__init__()
            self.w1 = nn.Linear(d, f, bias=False)
            self.w2 = nn.Linear(f, d, bias=False)
            self.w3 = nn.Linear(d, f, bias=False)

        def forward(self, hidden_states):
            return self.w2(F.silu(self.w1(hidden_states)) * self.w3(hidden_states))

    def __init__(self, hidden_dim=8, ffn_dim=16, num_experts=4, top_k=2):
        super().__init__()
        self.hidden_dim, self.num_experts, self.top_k = hidden_dim, num_experts, top_k
        self.gate = nn.Linear(hidden_dim, num_experts, bias=False)
        self.experts = nn.ModuleList([self.Expert(hidden_dim, ffn_dim) for _ in range(num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype, device=hidden_states.device)
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


class MaskedExperts(nn.Module):
    """Per-expert boolean-mask dispatch with item assignment, skipping idle experts."""

    def __init__(self, d=8, n=3):
        super().__init__()
        self.router = nn.Linear(d, n)
        self.experts = nn.ModuleList(nn.Linear(d, d) for _ in range(n))

    def forward(self, h):
        choice = self.router(h).argmax(-1)
        out = torch.zeros_like(h)
        for i, expert in enumerate(self.experts):
            mask = choice == i
            if mask.any():
                out[mask] = expert(h[mask])
        return out


class SelectedRows(nn.Module):
    """Rows picked by a mask, their count read on the host to branch, and the
    picked rows handed to the sub-DNN after the branch (a dynamic input)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, h):
        sel = self.fc2(h[h.sum(-1) > 0])
        if sel.shape[0] > 2:
            return self.fc(sel).sum(0)
        if sel.size(0) == 0:
            return h.sum(0)
        return sel.sum(0) * 2 + len(sel)


class ExpertHitMoeBlock(SparseMoeBlock):
    """The same block as the library's later versions write it: a loop over the
    experts some token chose (`expert_hit = ....nonzero()`), each picked from the
    module list by a row of that tensor (a run-time count of iterations, a run-time
    index: ran as Python from the loop to the end)."""

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype, device=hidden_states.device)
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


class SwitchExperts(nn.Module):
    """Each token to its argmax expert; an expert no token chose is skipped, and one
    that exactly one token chose runs on one row (the example routes one token to
    expert 1: the export's `!= 1` guard made the host refuse the model's own example)."""

    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        route = x.argmax(-1)
        out = x.clone()
        for i, expert in enumerate(self.experts):
            sel, = torch.where(route == i)
            if len(sel) == 0:
                continue
            out[sel] = expert(x[sel])
        return out


_SWITCH_INPUTS = [(torch.tensor([[1.0, 0, 0, 0], [2, 0, 0, 0], [0, 1, 0, 0], [3, 0, 0, 0]]),),
                  (torch.tensor([[0.0, 0, 1, 0], [2, 0, 0, 0], [0, 1, 0, 0], [0, 3, 0, 0]]),)] + _inputs((5, 4), seeds=6)

class GeneratorHelper(nn.Module):
    """Hidden states collected from a generator method (`list(self.states(x))`)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def states(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
            yield x

    def forward(self, x):
        hs = list(self.states(x))
        return hs[-1] + hs[0]


_OPS = {"flat": lambda t: t.reshape(-1)}  # a registry of callables: its calls run as Python


class UpdateThroughRegionResult(nn.Module):
    """A view of `h` made by Python code (a registry lambda), updated in place: `h`
    changes too. (Compiled as if the region's result were a fresh tensor, `h` was
    returned unchanged.)"""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        y = _OPS["flat"](h)
        y += 1.0
        return h


class InplaceReluOnInput(nn.Module):
    """`F.relu(x, inplace=True)` returns the caller's tensor itself: the `+=` on the
    result changes x as well, for the caller and for `x * 2`."""

    def forward(self, x):
        y = F.relu(x, inplace=True)
        y += 1.0
        return x * 2, y


@dataclasses.dataclass
class _Scores:
    logits: torch.Tensor
    hidden: torch.Tensor


class LenOfAnObject(nn.Module):
    """`len()` of a plain dataclass raises TypeError in eager; the compiled model gave
    its number of fields. Its truth is True whatever its fields are."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        out = _Scores(self.lin(x), x)
        if out and x.sum() > 0:
            return out.logits * len(out)
        return out.hidden


_Pair = collections.namedtuple("_Pair", "first second")


class ObjectsIntoPython(nn.Module):
    """A namedtuple and a dataclass built in forward, handed to Python code (a print):
    it must see eager's objects (it saw a plain tuple and a dict)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        pair = _Pair(self.lin(x), x + 1)
        scores = _Scores(x * 3, pair.first)
        print(type(pair).__name__, type(scores).__name__, pair.second.shape)
        return pair.first + scores.hidden


class KeepAtLeastOneToken(nn.Module):
    """DynamicViT-style token keeping: `k = max(int(keep.sum()), 1)` tokens, twice, and
    a branch on how many were kept. (The join of the constant 1 and the data's count
    was typed as 1: sizes read back were 1, and the second topk raised.)"""

    def __init__(self):
        super().__init__()
        self.score = nn.Linear(8, 1)

    def forward(self, x):
        s = torch.sigmoid(self.score(x)).squeeze(-1)
        k = max(int((s > 0.5).sum()), 1)
        s = torch.topk(s, k, dim=1).values
        k = max(int((s > 0.7).sum()), 1)
        kept = torch.topk(s, k, dim=1).values
        if kept.shape[1] > 2:
            return kept * 10, kept.shape[1]
        return kept, len(kept[0])


class AliasesOfAnUpdatedTensor(nn.Module):
    """Names that hold `y` itself or a view of it, made by ops one forgets return
    their input (`+y`, `torch.real`, `.H`, a row of `list(y)`, dropout off), see an
    in-place update of `y` on one path; so does `y` for an in-place activation of
    `y.sub_(...)`, for updates in a comprehension, and a view for `out=`. (Each was stale.)"""

    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        y = x * 1.0
        views = [+y, torch.real(y), y.H, list(y)[0], torch.dropout(y, 0.3, False), torch.Tensor.detach(y)]
        if x.sum() > 0:
            y.add_(1)
        z = x * 2.0
        F.relu(z.sub_(2), inplace=True)
        w = x * 3.0
        self.act(w.sub_(1))
        [y.mul_(2) for _ in range(2)]
        t = x * 4.0
        tv = t.T
        torch.add(t, 5, out=t)
        return [v * 1 for v in views], y, z, w, tv * 1


class LoopRebindsAnAlias(nn.Module):
    """A loop run as Python rebinds `w` (an alias of `a`) to `b` and updates it in place:
    `b` changes, `a` does not. (`a` was given w's new value: both came back as b.)"""

    def forward(self, x):
        a = x * 1.0
        b = x + 1.0
        w = a
        while w.sum() < 20:
            w = b
            w.add_(3)
        return a, b


def _counted(fn):
    @functools.wraps(fn)
    def wrapper(self, x):
        self.ncalls = getattr(self, "ncalls", 0) + 1
        return fn(self, x) * 1.5
    return wrapper


def _scaled(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2.0
    return wrapper


@_scaled
def _shifted(x):
    return x - 1


class DecoratedMethods(nn.Module):
    """Decorators written with functools.wraps run their own code around the method:
    forward, a helper and a module-level function ran undecorated ([1, 2, 0] for
    [1.5, 3, 0], ncalls never set). Grad-mode decorators stay transparent."""

    @_scaled
    def helper(self, x):
        return x * 2

    @torch.no_grad()
    def plain(self, x):
        return x + 1

    @_counted
    def forward(self, x):
        return self.helper(x) + _shifted(x) + self.plain(x) if x.sum() > 0 else -x


class PythonStateObjects(nn.Module):
    """Random generators, an iterator and a deque the model holds: the
    compile's runs of forward advanced them (the first call counted from 2 and drew
    other numbers than eager's)."""

    def __init__(self):
        super().__init__()
        self.gen = torch.Generator().manual_seed(0)
        self.rng = random.Random(0)
        self.ids = itertools.count()
        self.recent = collections.deque(maxlen=2)

    def forward(self, x):
        noise = torch.rand(x.shape, generator=self.gen)
        k = 2.0 if self.rng.random() < 0.5 else 1.0
        self.recent.append(next(self.ids))
        y = x * k + noise * sum(self.recent)
        return y if y.sum() > 0 else -y


class PropertyWithEffect(nn.Module):
    """A property that counts its reads: read where forward reads it, once per call."""

    def __init__(self):
        super().__init__()
        self.reads = 0

    @property
    def temperature(self):
        self.reads += 1
        return float(self.reads)

    def forward(self, x):
        y = x / self.temperature
        return y if y.sum() > 0 else -y


class ChangesHowModulesRun(nn.Module):
    """Hooks registered and a submodule's __dict__ written inside forward: the
    submodule called next runs with them, in the same call (they ran without)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.hooked = False

    def forward(self, x):
        if not self.hooked:
            self.lin.register_forward_hook(lambda mod, i, o: o * 3)
            self.hooked = True
        if x.sum() < 0:
            self.lin.__dict__["training"] = False
        h = self.lin(x)
        return h if h.sum() > 0 else -h


Level = enum.IntEnum("Level", "LOW HIGH")
Meta = collections.namedtuple("Meta", "name version")


class HeldEnumAndTuple(nn.Module):
    """An IntEnum member and a namedtuple held by the model, returned: eager's types
    (the IntEnum's repr was printed into host.py, a SyntaxError; the namedtuple came
    back a plain tuple)."""

    def __init__(self):
        super().__init__()
        self.level = Level.HIGH
        self.meta = Meta("m", 2)

    def forward(self, x):
        y = x * 2
        if y.sum() < 0:
            return y, self.level, self.meta
        return y, 0, None


class _Instances:
    """detectron2's Instances: fields kept in a dict by __setattr__/__getattr__."""

    def __init__(self, image_size):
        self._image_size = image_size
        self._fields = {}

    def __setattr__(self, name, val):
        if name.startswith("_"):
            super().__setattr__(name, val)
        else:
            self._fields[name] = val

    def __getattr__(self, name):
        if name == "_fields" or name not in self._fields:
            raise AttributeError(name)
        return self._fields[name]


def _post_process(scores):
    keep = scores > 0.5
    result = _Instances((4, 4))
    result.scores = scores[keep]
    result.classes = keep.nonzero()[:, 0]
    return result, keep.sum()


class FilledInstances(nn.Module):
    """An object built and filled field by field in regions, read after them: each
    region's compile-time run takes the object the one before made (the second took
    None, and the whole forward ran as Python)."""

    def forward(self, scores):
        res, n = _post_process(scores.flatten())
        return res.scores * 2, res.classes, n


class _Boxes:
    """detectron2's Boxes: `clip` rebinds the tensor it wraps (a method named like a tensor's)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def clip(self, box_size):
        h, w = box_size
        x1 = self.tensor[:, 0].clamp(min=0, max=w)
        y1 = self.tensor[:, 1].clamp(min=0, max=h)
        x2 = self.tensor[:, 2].clamp(min=0, max=w)
        y2 = self.tensor[:, 3].clamp(min=0, max=h)
        self.tensor = torch.stack((x1, y1, x2, y2), dim=-1)


class ClippedBoxes(nn.Module):
    """`boxes.clip(size)`'s result unused: it was taken for the tensor method and
    dropped as dead code (the unclipped boxes came back)."""

    def forward(self, boxes, scores):
        valid = torch.isfinite(boxes).all(dim=1)
        if not valid.all():
            boxes, scores = boxes[valid], scores[valid]
        boxes = _Boxes(boxes.reshape(-1, 4))
        boxes.clip((1, 2))
        return boxes.tensor * scores[:, None]


def _boxes_and_scores():
    g = torch.Generator().manual_seed(0)
    boxes, scores = torch.rand(5, 4, generator=g) * 4 - 1, torch.rand(5, generator=g)
    with_nan = boxes.clone()
    with_nan[2, 1] = float("inf")  # (an invalid box; NaN would compare unequal to itself below)
    return [(boxes, scores), (with_nan, scores), (boxes * 2, scores)]


class PackedGru(nn.Module):
    """pack_padded_sequence -> nn.GRU -> pad_packed_sequence: a PackedSequence came back
    from a sub-DNN as a plain tuple (an internal error sent forward to Python first)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 6, batch_first=True)
        self.head = nn.Linear(6, 2)

    def forward(self, x, lengths):
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h = self.rnn(packed)
        out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return self.head(out), torch.tanh(h)


def _sequences():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(3, 5, 4, generator=g), torch.tensor(lengths)) for lengths in ([5, 2, 3], [1, 4, 2], [5, 5, 5])]


class SegmentSums(nn.Module):
    """A sub-DNN no backend builds (torch.export: `x[:seg.numel()]` of a repeat_interleave
    length, "not in VR"): its statements run as Python, not the whole forward."""

    def forward(self, x, counts):
        h = torch.tanh(x) * 2
        seg = torch.repeat_interleave(torch.arange(counts.numel()), counts)
        sums = torch.zeros(counts.numel(), h.shape[1]).index_add_(0, seg, h[: seg.numel()])
        return sums.softmax(-1)


def _segments():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(10, 8, generator=g), torch.tensor(c)) for c in ([3, 5, 2], [1, 1, 1], [0, 4, 6])]


# name -> (factory, inputs, expected number of fallback regions or None when it may vary, min sub-DNNs)
CASES = {
    "segment_sums": (SegmentSums, _segments(), None, 1),
    "packed_gru": (PackedGru, _sequences(), None, 0),
    "clipped_boxes": (ClippedBoxes, _boxes_and_scores(), None, 1),
    "filled_instances": (FilledInstances, _inputs((6,)), 3, 1),
    "print_and_count": (PrintAndCount, _inputs(), None, 1),
    "saved_actions": (SavedActions, _inputs(), 1, 1),
    "try_around_return": (TryAroundReturn, _inputs(), 1, 1),
    "loop_with_logging": (LoopWithLogging, _inputs(), 3, 2),
    "untranslatable": (Untranslatable, _inputs(), 1, 0),
    "rebound_forward": (ReboundForward, _inputs(), 0, 1),
    "raise_on_bad_input": (RaiseOnBadInput, _inputs(scale=2.0), 0, 1),  # a host check (dycl.raise)
    "input_updated_in_place": (InputUpdatedInPlace, _inputs(), 1, 1),
    "view_updated_in_loop": (ViewUpdatedInLoop, [(torch.arange(6.0).reshape(2, 3),)] + _inputs((2, 3)), None, 0),
    "none_on_some_paths": (NoneOnSomePaths, _inputs((3,)), 0, 1),
    "topk_renormalised": (TopkRenormalised, _inputs((2, 5)), 0, 1),
    "data_attribute": (DataAttribute, _inputs(), 0, 1),
    "submodule_state_in_with": (SubmoduleStateInWith, [(torch.ones(1, 4) * k,) for k in (1, 2, -1, 3, 5)], None, 0),
    "hook_on_sequential": (HookOnSequential, _inputs(), None, 0),
    "try_return_shapes": (TryReturnShapes, _inputs(), 1, 1),
    "receiver_not_self": (ReceiverNotSelf, _inputs(), 0, 1),
    "config_objects": (ConfigObjects, _inputs(), 0, 1),
    "config_written_in_forward": (ConfigWrittenInForward, _inputs(), None, 1),
    "caller_tensor_updated_in_helper_branch": (CallerTensorUpdatedInHelperBranch, _inputs(), 1, 1),
    "buffer_updated_in_forward": (BufferUpdatedInForward, _inputs(), 0, 1),
    "words_before_break": (WordsBeforeBreak, _inputs(seeds=12), None, 1),
    "stateful_decoder": (StatefulDecoder, _inputs((1, 5, 8), scale=3.0, seeds=12), 1, 1),  # the print
    "layer_counter": (LayerCounter, _inputs(seeds=10), 0, 1),
    "state_on_some_paths": (StateOnSomePaths, _inputs(), None, 1),
    "sparse_moe_block": (SparseMoeBlock, _inputs((1, 6, 8), seeds=10), 0, 1),
    "masked_experts": (MaskedExperts, _inputs((5, 8), seeds=12), 0, 2),
    "generator_helper": (GeneratorHelper, _inputs((2, 4)), None, 0),
    "switch_experts": (SwitchExperts, _SWITCH_INPUTS, 0, 1),
    "expert_hit_moe_block": (ExpertHitMoeBlock, _inputs((1, 3, 8), seeds=10), 0, 1),
    "update_through_region_result": (UpdateThroughRegionResult, _inputs((2, 4)), None, 0),
    "inplace_relu_on_input": (InplaceReluOnInput, _inputs((2, 4)), None, 0),
    "len_of_an_object": (LenOfAnObject, _inputs(), 1, 1),
    "objects_into_python": (ObjectsIntoPython, _inputs(), 1, 1),
    "loop_rebinds_an_alias": (LoopRebindsAnAlias, _inputs((2,)) + [(torch.full((2,), 30.0),)], None, 0),
    "aliases_of_an_updated_tensor": (AliasesOfAnUpdatedTensor, _inputs((2, 2)), None, 0),
    "keep_at_least_one_token": (KeepAtLeastOneToken, _inputs((1, 6, 8), scale=3.0, seeds=12), None, 1),
    "decorated_methods": (DecoratedMethods, _inputs(), None, 0),
    "python_state_objects": (PythonStateObjects, _inputs(), None, 0),
    "property_with_effect": (PropertyWithEffect, _inputs(), None, 0),
    "changes_how_modules_run": (ChangesHowModulesRun, _inputs(), 1, 0),
    "held_enum_and_tuple": (HeldEnumAndTuple, _inputs(), 0, 1),
    "selected_rows": (SelectedRows, _inputs((6, 8), seeds=12) + [(-torch.ones(6, 8),)], 0, 3),
}
