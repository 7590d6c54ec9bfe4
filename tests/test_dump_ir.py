"""The IR at any stage: `dycl.compile(dump_ir=[...])` (`cm.ir_after`), `dycl compile
--print-ir-after PASS` and `dycl import --stop-after PASS`."""

import subprocess
import sys
from pathlib import Path

import pytest

import dycl
from dycl.diagnostics import UsageError

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SPEC = f"{ROOT / 'examples' / 'branchy.py'}:make_model"
STAGES = ["frontend", "inline-calls", "unroll-loops", "constant-propagation", "shape-inference",
          "constant-propagation#2", "check-index-bounds", "sink-state-stores", "sink-into-branches", "extract-hcfg", "hoist-computation-free", "outline-subgraphs",
          "lower-host-scalars"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def all_stages(tmp_path_factory):
    from dycl.models import model_from_spec

    seen = []
    model = model_from_spec(SPEC)  # keyed by its spec, as `dycl import` records it
    cm = dycl.compile(model, [dycl_input()], backend="torch", dump_ir=["all"], model_key=SPEC,
                      on_ir=lambda stage, text: seen.append(stage), out_dir=tmp_path_factory.mktemp("ir") / "out")
    return cm, seen


def dycl_input():
    import torch

    return torch.randn(1, 16)


def test_every_stage_in_pipeline_order(all_stages):
    cm, seen = all_stages
    assert list(cm.ir_after) == STAGES == seen  # on_ir saw each as it was taken
    ir = cm.ir_after
    assert "!dycl.any" in ir["frontend"] and "!dycl.any" not in ir["shape-inference"]
    assert "dycl.tensor_region" in ir["extract-hcfg"] and "dycl.call_subgraph" not in ir["extract-hcfg"]
    # The last stage is what was compiled (a fixed backend adds nothing after it).
    assert ir["lower-host-scalars"] == (cm.path / "module.mlir").read_text()


def test_some_stages(branchy):
    cm = dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="torch",
                      dump_ir=["constant-propagation#2", "shape-inference"])
    assert list(cm.ir_after) == ["shape-inference", "constant-propagation#2"]
    assert dycl.load(cm.path).ir_after == {}  # debugging output, not part of the artifact


@pytest.mark.parametrize("names, message", [
    (["shape-infer"], "unknown pass 'shape-infer' to dump the IR after (pipeline dycl-default) (available: all, "
                      "frontend, inline-calls, unroll-loops, constant-propagation, shape-inference, "
                      "constant-propagation#2, check-index-bounds, sink-state-stores, sink-into-branches, extract-hcfg, hoist-computation-free, outline-subgraphs, "
                      "lower-host-scalars); "
                      "did you mean 'shape-inference'?"),
    (["assign-backends"], "pass 'assign-backends' to dump the IR after: pipeline dycl-default has no such stage"),
    (["constant-propagation#3"], "pass 'constant-propagation#3' to dump the IR after: pipeline dycl-default has "
                                 "no such stage (its stages: frontend, inline-calls,"),
])
def test_unknown_stage_is_refused_before_compiling(branchy, names, message):
    with pytest.raises(UsageError) as e:
        dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="torch", dump_ir=names)
    assert message in str(e.value)


def test_assign_backends_is_a_stage_when_a_policy_chooses():
    from dycl.compiler import _check_dump_ir

    _check_dump_ir(["assign-backends"], "dycl-default", policy=True)
    with pytest.raises(UsageError, match="has no such stage"):
        _check_dump_ir(["assign-backends"], "dycl-default", policy=False)


def test_cut_data_dependent_shapes_is_a_stage_for_a_backend_that_needs_it():
    from dycl.compiler import _check_dump_ir

    _check_dump_ir(["cut-data-dependent-shapes"], "dycl-default", policy=False, cut=True)
    with pytest.raises(UsageError, match="has no such stage"):
        _check_dump_ir(["cut-data-dependent-shapes"], "dycl-default", policy=True)


def test_import_stops_after_any_pass_with_the_ir_compile_sees(all_stages):
    cm, _ = all_stages
    r = run("dycl", "import", SPEC, "--input", "1x16xf32", "--stop-after", "shape-inference")
    assert r.returncode == 0, r.stderr
    assert r.stdout == cm.ir_after["shape-inference"]
    r = run("dycl", "import", SPEC, "--input", "1x16xf32", "--stop-after", "shape-infer")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "dycl: error: unknown pass 'shape-infer' to stop after (pipeline dycl-default)" in r.stderr


def test_compile_prints_ir_after_passes(tmp_path):
    r = run("dycl", "compile", "examples/branchy.py:make_model", "--input", "1x16xf32", "--backend", "torch",
            "-o", str(tmp_path / "out"), "--print-ir-after", "outline-subgraphs", "--print-ir-after", "frontend")
    assert r.returncode == 0, r.stderr
    banners = [line for line in r.stderr.splitlines() if line.startswith("// -----// IR Dump After")]
    assert banners == ["// -----// IR Dump After frontend //----- //",
                       "// -----// IR Dump After outline-subgraphs //----- //"]
    assert r.stderr.split(banners[1], 1)[1].strip() == (tmp_path / "out" / "module.mlir").read_text().strip()
    assert "IR Dump" not in r.stdout
