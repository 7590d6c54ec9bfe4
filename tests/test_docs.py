"""The docs that are generated from the code, or that hold code, stay true to it."""

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dycl.tools import gen_docs

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GUIDE = ROOT / "docs" / "writing-a-pass.md"


def test_generated_reference_is_current(capsys):
    assert gen_docs.main(["--check"]) == 0, capsys.readouterr().err


def test_check_names_the_stale_file(tmp_path, capsys):
    assert gen_docs.main(["--out", str(tmp_path)]) == 0
    (tmp_path / "passes.md").write_text("old\n")
    assert gen_docs.main(["--out", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'passes.md'} is stale" in err and "dialect.md" not in err
    assert (tmp_path / "passes.md").read_text() == "old\n"  # --check writes nothing


def test_reference_covers_every_op_and_pass():
    from dycl.dialects.dycl import DYCL
    from dycl.registry import BUILTIN_PASSES

    text = gen_docs.generate()
    for op in DYCL.operations:
        assert f"### `{op.name}` ({op.__name__})" in text["dialect.md"]
    assert "| `cond` | single | `i1` |" in text["dialect.md"]  # dycl.condition's operand constraint
    assert "- `HasParent(dycl.if, dycl.for, dycl.while, dycl.tensor_region)`" in text["dialect.md"]
    for name in BUILTIN_PASSES:
        assert f"## `{name}`" in text["passes.md"]
    assert "| `max-trip-count` | `int` | `4096` |" in text["passes.md"]
    assert "**Guarantees:** each such loop" in text["passes.md"]
    assert text == gen_docs.generate()  # deterministic


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", GUIDE.read_text(), re.DOTALL | re.MULTILINE)


@pytest.fixture(scope="module")
def my_opt():
    """The guide's Python blocks, in order, as the module `my_opt`."""
    module = types.ModuleType("my_opt")
    sys.modules["my_opt"] = module  # dataclasses look their module up
    try:
        exec(compile("\n".join(_blocks("python")), str(GUIDE), "exec"), module.__dict__)
        yield module
    finally:
        del sys.modules["my_opt"]


def test_writing_a_pass_guide_runs(my_opt, tmp_path, capsys):
    (test,) = _blocks("mlir")
    run = re.search(r"// RUN: python my_opt\.py %s (.*?) \| filecheck %s\n", test)
    assert run, "the guide's RUN line changed: update this test"
    (tmp_path / "test.mlir").write_text(test)
    args = [str(tmp_path / "test.mlir"), *run.group(1).split(), "-o", str(tmp_path / "out.mlir")]
    assert my_opt.main(args, driver=my_opt.MyOptMain) == 0
    out = (tmp_path / "out.mlir").read_text()
    check = subprocess.run([str(BIN / "filecheck"), str(tmp_path / "test.mlir"), "--input-file", str(tmp_path / "out.mlir")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr + out
    # The test can fail: unchanged IR does not pass its CHECK lines.
    check = subprocess.run([str(BIN / "filecheck"), str(tmp_path / "test.mlir"), "--input-file", str(tmp_path / "test.mlir")],
                           capture_output=True, text=True)
    assert check.returncode != 0


def test_guide_driver_lists_and_suggests_its_pass(my_opt, capsys):
    assert my_opt.main(["--list-passes"], driver=my_opt.MyOptMain) == 0
    listing = capsys.readouterr().out
    dycl_section, xdsl_section = listing.split("\nxDSL passes:\n")
    assert re.search(r"^  remove-eval-dropout +Removes dropout calls that run in eval mode\.$", dycl_section, re.M)
    assert re.search(r"^  unroll-loops +Fully unrolls .*\n      max-trip-count: int = 4096$", dycl_section, re.M)
    assert re.search(r"^  canonicalize +Applies all canonicalization patterns\.$", xdsl_section, re.M)
    assert "remove-eval-dropout" not in xdsl_section and "unroll-loops" not in xdsl_section
    with pytest.raises(SystemExit) as e:
        my_opt.main(["-p", "remove-eval-dropot"], driver=my_opt.MyOptMain)
    assert e.value.code == 1
    assert "did you mean 'remove-eval-dropout'?" in capsys.readouterr().err
