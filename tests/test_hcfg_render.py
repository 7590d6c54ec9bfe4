"""`dycl hcfg OUT -o hcfg.dot|svg|png`: the HCFG drawn with Graphviz, sub-DNNs labelled
with backend, op count and types, conditions styled apart."""

import re
import shutil

import pytest

import dycl
from dycl import cli, render

# `dycl hcfg` parses module.mlir in this process; dycl.if's parser still calls xDSL's
# deprecated parse_operand() without a type (dialects/dycl.py), a warning made an error here.
pytestmark = pytest.mark.filterwarnings("ignore:Calling parse_operand\\(\\) without a type:DeprecationWarning")


@pytest.fixture(scope="module")
def artifact(branchy, tmp_path_factory):
    out = tmp_path_factory.mktemp("hcfg") / "out"
    dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="torch", out_dir=out)
    return out


def hcfg(*args: str) -> int:
    try:
        return cli.main(["hcfg", *args])
    except SystemExit as e:
        return int(e.code or 0)


def test_dot_labels_and_styles(artifact, tmp_path, capsys):
    assert hcfg(str(artifact), "-o", str(tmp_path / "h.dot")) == 0
    dot = (tmp_path / "h.dot").read_text()
    # Each sub-DNN: its backend (from the manifest: a fixed backend leaves none in the IR), op count, types.
    assert 'label="sub_0\\nbackend: torch\\n3 ops\\nin: 1x16xf32\\nout: 1x16xf32, i1"' in dot
    assert 'label="sub_2\\nbackend: torch\\n2 ops\\nin: 1x16xf32\\nout: 1x16xf32"' in dot
    boxes = [line for line in dot.splitlines() if "shape=box" in line]
    assert len(boxes) == 3 and all('style="rounded,filled", fillcolor="#d6e6f5"' in b for b in boxes)
    diamonds = [line for line in dot.splitlines() if "shape=diamond" in line]
    assert len(diamonds) == 1 and 'fillcolor="#fdebc8"' in diamonds[0]
    assert 'label="if\\nsub_0 result 1"' in diamonds[0]  # what the condition tests
    # The artifact's own drawing says the same (it also has source lines, which module.mlir does not keep).
    assert dot == re.sub(r" @ line \d+", "", (artifact / "hcfg.dot").read_text())
    assert "HCFG: 6 nodes (3 sub-DNNs, 1 conditions, 0 loops), 6 edges" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed (apt-get install graphviz)")
@pytest.mark.parametrize("suffix, magic", [("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_picture(artifact, tmp_path, suffix, magic):
    out = tmp_path / f"hcfg.{suffix}"
    assert hcfg(str(artifact), "-o", str(out)) == 0
    data = out.read_bytes()
    assert data.startswith(magic)
    if suffix == "svg":
        text = data.decode()
        assert "<svg" in text and "backend: torch" in text and "sub_0 result 1" in text


def test_without_dot_writes_the_graph_and_says_how_to_install(artifact, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(render, "has_dot", lambda: False)
    assert hcfg(str(artifact), "-o", str(tmp_path / "hcfg.svg")) == 1
    err = capsys.readouterr().err
    assert f"dycl: error: drawing {tmp_path}/hcfg.svg needs Graphviz's `dot` program" in err
    assert "apt-get install graphviz" in err and f"dot -Tsvg {tmp_path}/hcfg.dot -o {tmp_path}/hcfg.svg" in err
    assert "Traceback" not in err
    assert (tmp_path / "hcfg.dot").read_text().startswith("digraph hcfg")
    assert not (tmp_path / "hcfg.svg").exists()


def test_unknown_picture_format(artifact, tmp_path, capsys):
    assert hcfg(str(artifact), "-o", str(tmp_path / "hcfg.jpg")) == 1
    assert "dycl: error: cannot draw the HCFG as '.jpg': give -o a .svg, .png, .pdf or .dot file" in \
        capsys.readouterr().err
