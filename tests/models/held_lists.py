"""Decoders and loops that append to a Python list in a loop the data ends, written
as published greedy decoders and captioners write them. Each list's length is the
trip count's, so the host holds it (`!dycl.list`); the loops stay compiled.

CASES: name -> (factory, inputs that drive every loop length and exit)."""

import torch
from torch import nn
import torch.nn.functional as F

EOS = 3


class GreedyTokenIds(nn.Module):
    """The tutorial decoder: token ids read with .item() into a list, `while True`
    with a data-dependent break and a length cap, the ids returned as a tensor."""

    def __init__(self, vocab=5, hidden=16, max_len=20):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.max_len = max_len

    def forward(self, h):
        word = torch.zeros(1, dtype=torch.long)
        words = []
        while True:
            h = self.gru(self.embedding(word), h)
            word = self.out(h).argmax(dim=-1)
            words.append(word.item())
            if word.item() == EOS or len(words) >= self.max_len:
                break
        return torch.tensor(words)


class StackedStepLogits(nn.Module):
    """Per-step logits collected in a list and stacked after the loop, which ends on
    a confidence test or a cap in its condition; the list's length is returned too."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 8)
        self.head = nn.Linear(8, 5)
        self.back = nn.Linear(5, 4)

    def forward(self, x):
        h = c = torch.zeros(1, 8)
        outputs = []
        inp = x
        while len(outputs) < 12:
            h, c = self.cell(inp, (h, c))
            logits = self.head(h)
            outputs.append(logits)
            if inp.abs().sum() > 6:
                break
            inp = inp * 1.5 + F.softmax(logits, -1)[:, :4]
        return torch.stack(outputs, dim=1), len(outputs)


class ListOfIdsReturned(nn.Module):
    """The decoded ids returned as eager returns them, a Python list of ints, with
    the last one read back (`ids[-1]`) inside the loop."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 8)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        ids = [int(x.argmax())]
        state = x
        while ids[-1] != 0 and len(ids) < 10:
            state = torch.tanh(state + self.embed(torch.tensor([ids[-1]])))
            ids.append(int(self.proj(state).argmax()))
        return ids


class AppendOverRuntimeRange(nn.Module):
    """A loop over `range(n)` with n read from the data, appending each step's
    tensor to a list that starts with the input, concatenated after."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        n = int(x.abs().sum().item()) % 5
        parts = [x]
        for i in range(n):
            parts.append(self.fc(parts[-1]) * (i + 1))
        return torch.cat(parts, 0), sum(p.sum() for p in [x])


class IterateTheDecodedList(nn.Module):
    """The decoded list read after the loop: iterated, its length, its truth value,
    and a Python `sum` and `max` over it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        scores = []
        while x.abs().sum() < 20 and len(scores) < 12:
            x = self.fc(x) * 0.1 + x * 1.5 + 0.1
            scores.append(float(x.detach().sum()))
        total = torch.zeros(())
        for s in scores:
            total = total + s
        return total, len(scores), bool(scores), sum(scores), max(scores) if scores else None


class LastOfAGrowingList(nn.Module):
    """A list of tensors grown while the data says so and its last element returned:
    eager's IndexError where the loop never ran."""

    def forward(self, x):
        ys = []
        while x.sum() > 0:
            ys.append(x)
            x = x - 1
        return ys[-1]


class PickedByARunTimeIndex(nn.Module):
    """Beam search's last step: the best of the hypotheses built in an unrolled loop,
    `seqs[scores.argmax()]`, and a config tuple indexed by a number read from data."""

    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.temperatures = (0.5, 1.0, 2.0)

    def forward(self, x):
        seqs, scores = [], []
        for head in self.heads:
            y = torch.tanh(head(x))
            seqs.append(y)
            scores.append(y.sum())
        best = torch.stack(scores).argmax()
        k = int(x.abs().sum()) % 3
        return seqs[best] * self.temperatures[k], self.temperatures[k], k


class AppendedInAHelper(nn.Module):
    """The step in a helper that appends to the list it is handed, and a second list
    extended by two numbers a step."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def _step(self, x, outs):
        y = torch.tanh(self.fc(x)) + x
        outs.append(y)
        return y

    def forward(self, x):
        outs, scores = [], []
        while x.abs().sum() < 10:
            x = self._step(x, outs) * 1.3
            scores.extend([float(x.detach().sum()), 1.0])
        return (torch.cat(outs, 0) if outs else x), len(scores), sum(scores)


class ListMethodsAndSlices(nn.Module):
    """The decoded ids' tail (`ids[-3:]`), `index`, `count`, a copy, a slice's length."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        ids = [0]
        while x.abs().sum() < 10:
            x = torch.tanh(self.fc(x)) + x * 1.3
            ids.append(int(x.argmax()))
        return torch.tensor(ids[-3:]), ids.index(ids[-1]), ids.count(0), len(ids[1:]), list(ids)


class ComprehensionsOverHeldLists(nn.Module):
    """List comprehensions and generator expressions over a decoded list and over a
    run-time range: loops whose lists the host holds."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        toks = []
        while x.abs().sum() < 10:
            x = torch.tanh(self.fc(x)) + x * 1.3
            toks.append(x.argmax())
        ids = [t.item() for t in toks]
        big = [t.item() * 2 for t in toks if t.item() > 1]
        n = int(x.abs().sum()) % 4
        row = [float(x[0, i]) for i in range(n)]
        return ids, big, sum(t.item() for t in toks), row, any(t > 2 for t in toks)


class ScoresGrownAsATuple(nn.Module):
    """transformers' `generate` style: each step's scores added to a tuple
    (`scores += (logits,)`) while any sequence is unfinished, the unfinished flags
    updated in the loop and checked in a helper; the tuple is returned as eager
    returns it (a tuple of tensors, as long as the loop ran) and stacked."""

    def __init__(self, vocab=6, hidden=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.head = nn.Linear(hidden, vocab)

    def _has_unfinished(self, unfinished):
        return bool(unfinished.max() != 0)

    def forward(self, h):
        tok = torch.zeros(h.shape[0], dtype=torch.long)
        unfinished = torch.ones(h.shape[0], dtype=torch.long)
        scores = ()
        while self._has_unfinished(unfinished):
            h = self.cell(self.embedding(tok), h)
            logits = self.head(h)
            scores += (logits,)
            tok = logits.argmax(-1) * unfinished + EOS * (1 - unfinished)
            unfinished = unfinished & (tok != EOS).long() & (len(scores) < 9)
        return scores, torch.stack(scores, 1).log_softmax(-1), len(scores)


class TupleRebuiltEachStep(nn.Module):
    """A tuple grown by rebinding (`outs = outs + (y,)`, `(*outs, y)`) in a loop
    that stops on the data (or never starts), its last element, its truth and a slice
    read after."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        outs = ()
        firsts = (x[:, 0],)
        while x.abs().sum() < 20 and len(outs) < 10:
            x = self.fc(x).tanh() * 2 + x
            outs = outs + (x,)
            firsts = (*firsts, x[:, 0])
        return (outs[-1] * 2 if outs else -x), torch.cat(outs[1:] + (x,), 0), torch.stack(firsts, 1)


def _states(n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 16, generator=g) * 3,) for _ in range(n)]


def _rows(n=6, seed=1, width=4):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, width, generator=g) * s,) for s in (0.1, 0.5, 1, 2, 4, 8)[:n]]


CASES = {
    "comprehensions_over_held_lists": (ComprehensionsOverHeldLists, _rows() + [(torch.full((1, 4), 3.0),)]),
    "list_methods_and_slices": (ListMethodsAndSlices, _rows() + [(torch.full((1, 4), 3.0),)]),
    "appended_in_a_helper": (AppendedInAHelper, _rows() + [(torch.full((1, 4), 3.0),)]),
    "picked_by_a_run_time_index": (PickedByARunTimeIndex, _rows() + [(torch.full((1, 4), 0.3),)]),
    "last_of_a_growing_list": (LastOfAGrowingList, [(torch.full((1, 4), v),) for v in (0.5, 2.0, 3.3, -3.0)]),
    "greedy_token_ids": (GreedyTokenIds, _states(8)),
    "stacked_step_logits": (StackedStepLogits, _rows()),
    "list_of_ids_returned": (ListOfIdsReturned, [(torch.randn(1, 8, generator=torch.Generator().manual_seed(k)),)
                                                 for k in range(6)] + [(torch.zeros(1, 8),)]),
    "append_over_runtime_range": (AppendOverRuntimeRange, _rows() + [(torch.zeros(1, 4),)]),
    "scores_grown_as_a_tuple": (ScoresGrownAsATuple, [(torch.randn(2, 8, generator=torch.Generator().manual_seed(k)) * 2,)
                                                      for k in range(8)]),
    "tuple_rebuilt_each_step": (TupleRebuiltEachStep, _rows() + [(torch.full((1, 4), 6.0),)]),
    "iterate_the_decoded_list": (IterateTheDecodedList, _rows() + [(torch.full((1, 4), 6.0),)]),
}


# Lists shared the way Python shares objects (probe Q): the compiled model must keep
# eager's one-object semantics (compiled where it can, else run as Python).
class _Aliasing(nn.Module):
    def forward(self, x):
        raise NotImplementedError


class ListInATupleFirst(_Aliasing):
    def forward(self, x):
        toks = []
        t = (toks, 1)
        i = 0
        while x[i] > 0:
            toks.append(x[i].item())
            i += 1
        return t[0], toks


class SortedAfterTheLoop(_Aliasing):
    def forward(self, x):
        toks = []
        i = 0
        while x[i] > 0:
            toks.append(x[i].item())
            i += 1
        toks.sort()
        return toks


class SameTensorAppended(_Aliasing):
    def forward(self, x):
        h = torch.zeros(1)
        outs = []
        i = 0
        while x[i] > 0:
            h += x[i]
            outs.append(h)
            i += 1
        return [o.clone() for o in outs]


class ListOfTheSameList(_Aliasing):
    def forward(self, x):
        toks, outer = [], []
        i = 0
        while x[i] > 0:
            toks.append(i)
            outer.append(toks)
            i += 1
        return outer


class SecondLoopThroughAnAlias(_Aliasing):
    def forward(self, x):
        toks = []
        i = 0
        while x[i] > 0:
            toks.append(i)
            i += 1
        b = toks
        while len(b) < 5 and x.sum() > 0:
            b.append(100 + len(b))
        return toks


class RebindInsideTheLoop(_Aliasing):
    def forward(self, x):
        toks = []
        old = toks
        i = 0
        while x[i] > 0:
            if i == 1:
                toks = []
            toks.append(i)
            i += 1
        return old, toks


class OneOfTwoLists(_Aliasing):
    def forward(self, x):
        a, b = [], []
        i = 0
        while x[i] > 0:
            pick = a if x[i] > 1 else b
            pick.append(i)
            i += 1
        return a, b


class AppendedToItself(_Aliasing):
    def forward(self, x):
        toks = []
        i = 0
        while x[i] > 0:
            toks.append(i)
            i += 1
        toks.append(toks)
        return len(toks), len(toks[-1])


ALIASING = {cls.__name__: cls for cls in (ListInATupleFirst, SortedAfterTheLoop, SameTensorAppended, ListOfTheSameList,
                                          SecondLoopThroughAnAlias, RebindInsideTheLoop, OneOfTwoLists, AppendedToItself)}
ALIASING_INPUTS = [torch.tensor([3., 2., 1., 0., 5.]), torch.tensor([0.5, 2., 1., 0., 5.]), torch.tensor([0., 1., 2., 3., 0.])]
