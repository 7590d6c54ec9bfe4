"""Loops with `break`: per-path copies while small, a break flag once copies would explode.

Copying the code after each `break` per path keeps values that differ by path apart
(decoded lists of different lengths), but copies multiply with every further loop
that breaks. Past `PER_PATH_BUDGET` ops a loop is lowered with a flag instead; where
a join would merge lists of different lengths, the lists the loop appends to are
held by the host; modules read later keep the per-path copies.
"""

import pytest
import torch

import dycl.frontend.loops as loops
from dycl.frontend.lowering import lower_module

from models.constructs import CASES, check_matches_eager

BREAK_CASES = ["break_in_branch", "break_decode", "nested_breaks", "while_break", "nested_breaks_appending_to_a_list"]


def lowered_ops(name: str) -> int:
    cls, inputs = CASES[name]
    torch.manual_seed(0)
    return sum(1 for _ in lower_module(cls().eval(), inputs[0]).walk())


def test_nested_breaks_stay_small():
    # Per path only, this program lowered to 803,733 ops and took minutes to compile.
    assert lowered_ops("nested_breaks") < 1_500
    # And this one to 125k lines (six minutes): its list is held by the host instead.
    assert lowered_ops("nested_breaks_appending_to_a_list") < 2_000


def test_small_loops_keep_their_per_path_copies(monkeypatch):
    flagged: list[int] = []
    original = loops.LoopLowering._flagged_for
    monkeypatch.setattr(loops.LoopLowering, "_flagged_for",
                        lambda self, s, *a: (flagged.append(s.lineno), original(self, s, *a))[1])
    lowered_ops("break_in_branch")
    lowered_ops("break_decode")
    assert flagged == []


def test_a_decoder_over_the_budget_holds_its_token_list(monkeypatch):
    # The flag would join token lists of different lengths: the host holds the list
    # (within the budget each path keeps its own compile-time list).
    def held_lists() -> int:
        cls, inputs = CASES["break_decode"]
        return sum(1 for op in lower_module(cls().eval(), inputs[0]).walk() if op.name == "dycl.make_list")

    assert held_lists() == 0
    monkeypatch.setattr(loops, "PER_PATH_BUDGET", 0)
    assert held_lists() == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", BREAK_CASES)
def test_every_break_lowering_matches_eager(name, monkeypatch):
    """With no budget every loop with `break` tries the flag first."""
    monkeypatch.setattr(loops, "PER_PATH_BUDGET", 0)
    check_matches_eager(name, backend="torch")
