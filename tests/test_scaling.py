"""Deeply nested IR works end to end, and too-deep IR is a located error.

How cost grows with IR size is measured, not asserted: `python -m tools.bench_scaling`
(every stage, up to 100k ops; per-op time stays flat).
"""

import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.traits import SymbolTable

from dycl.symbols import lookup_symbol
from dycl.tools import bench_scaling
from dycl.tools.bench_scaling import generate_deep, generate_host, make_context


def parse(ctx, text):
    # dycl.if/dycl.for's custom parsers call xDSL's deprecated untyped parse_operand
    # (typing it would change their verifier diagnostics); pytest makes warnings errors.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return bench_scaling.parse(ctx, text)


def test_indexed_symbol_lookup_follows_ir_edits():
    module = parse(make_context(), generate_host(3))
    module.verify()
    names = [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)]
    for name in names:
        assert lookup_symbol(module, name) is SymbolTable.lookup_symbol(module, name)
    first = lookup_symbol(module, names[0])
    first.detach()  # removed: no stale hit
    assert lookup_symbol(module, names[0]) is None
    first.sym_name = type(first.sym_name)("renamed")
    module.body.block.add_op(first)  # back under another name
    assert lookup_symbol(module, "renamed") is first and lookup_symbol(module, names[0]) is None
    with pytest.raises(ValueError, match="no SymbolTable ancestor"):
        lookup_symbol(func.FuncOp("lone", ((), ())), "x")


ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _opt(*args: str, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "dycl-opt"), *args], input=stdin, capture_output=True, text=True, cwd=ROOT)


@pytest.mark.slow
def test_deep_nesting_round_trips(tmp_path):
    text = generate_deep(500)
    pretty = _opt(stdin=text)
    assert pretty.returncode == 0 and "Traceback" not in pretty.stderr, pretty.stderr[-2000:]
    generic = _opt("--print-op-generic", stdin=pretty.stdout)
    assert generic.returncode == 0 and "Traceback" not in generic.stderr, generic.stderr[-2000:]
    again = _opt(stdin=generic.stdout)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout == pretty.stdout
    assert pretty.stdout.count("dycl.if") == 500


@pytest.mark.slow
def test_deep_nesting_passes():
    r = _opt("-p", "inline-calls,unroll-loops,constant-propagation,extract-hcfg,outline-subgraphs",
             stdin=generate_deep(500))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]


@pytest.mark.slow
def test_too_deep_is_a_located_error():
    r = _opt(stdin=generate_deep(1_200))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("stdin:1001:42: error: regions nested 1001 deep"), r.stderr[:500]
