"""How deeply regions may nest.

xDSL's parser, printer, verifier and walks, and dycl's passes, recurse once per
nesting level (about a dozen Python frames a level), so Python's default limit
of 1000 frames breaks at ~80 nested `dycl.if`s. Whoever builds nested IR (the
parser, the frontend) calls `allow_depth` as it goes: the limit grows with the
depth actually seen, up to MAX_DEPTH levels; deeper IR is a located error.
"""

from __future__ import annotations

import sys

MAX_DEPTH = 1000
# Frames per level, measured ~12 for parse/verify/print/passes; generous margin.
_FRAMES_PER_LEVEL = 40
_BASE = 2000
_allowed = 0


def allow_depth(depth: int) -> None:
    """Make sure IR nested `depth` regions deep can be processed (depth ≤ MAX_DEPTH)."""
    global _allowed
    if depth <= _allowed:
        return
    _allowed = max(depth, 2 * _allowed, 64)  # grow geometrically: few calls
    needed = _BASE + _FRAMES_PER_LEVEL * min(_allowed, MAX_DEPTH)
    if sys.getrecursionlimit() < needed:
        sys.setrecursionlimit(needed)


def too_deep(depth: int) -> str:
    return f"regions nested {depth} deep (dycl supports at most {MAX_DEPTH} levels of nesting)"
