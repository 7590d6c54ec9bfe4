"""Smoke test of the benchmark script (tools/bench.py): it runs and writes its numbers."""

import json
import sys

import pytest
import torch


@pytest.mark.slow
def test_bench_branchy_torch_backend(tmp_path):
    from dycl.tools import bench

    out = tmp_path / "bench.json"
    rc = bench.main(["--models", "branchy", "--backends", "torch", "--runs", "2", "--warmup", "1",
                     "--no-torch-compile", "--json", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    result = doc["models"]["branchy"]
    assert result["compile"]["torch"]["status"] == "ok"
    assert result["compile"]["torch"]["seconds"] > 0
    assert result["torch_compile"]["status"] == "skipped"
    assert sorted(result["paths"]) == ["a", "b"]
    for path in result["paths"]:
        latency = result["latency_ms"][path]
        assert set(latency) == {"eager", "torch", "oracle"}
        assert latency["eager"] > 0 and latency["torch"] > 0 and latency["oracle"] > 0
        assert result["speedup_vs_eager"][path]["torch"] == pytest.approx(latency["eager"] / latency["torch"])
        assert result["oracle_ratio"][path]["torch"] == pytest.approx(latency["oracle"] / latency["torch"])
        assert result["error"][path]["torch"] <= 1e-5
        assert result["error"][path]["oracle"] <= 1e-5  # the traced path computes what eager does
        assert result["oracle"][path]["predicates"] >= 1  # the branch's predicate stays in the oracle
    assert doc["mismatches"] == [] and doc["compile_failures"] == []


def test_bench_quick_writes_json_markdown_chart(tmp_path):
    """`--quick`, the CI smoke test: branchy with `auto`, every result checked against eager, every report written."""
    from dycl.tools import bench

    out, md, png = tmp_path / "bench.json", tmp_path / "bench.md", tmp_path / "bench.png"
    rc = bench.main(["--quick", "--trace-inputs", "20", "--json", str(out), "--markdown", str(md), "--chart", str(png)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert {"machine", "settings", "models", "mismatches", "compile_failures"} <= set(doc)
    assert doc["settings"]["runs"] == 5 and doc["settings"]["backends"] == ["auto"]
    assert not doc["settings"]["torch_compile"]
    result = doc["models"]["branchy"]
    compiled = result["compile"]["auto"]
    assert compiled["status"] == "ok" and compiled["seconds"] > 0 and compiled["peak_rss_mb"] >= 0
    for path in result["paths"]:
        assert result["latency_ms"][path]["eager"] > 0 and result["latency_ms"][path]["auto"] > 0
        assert result["speedup_vs_eager"][path]["auto"] > 0
        assert result["error"][path]["auto"] <= 1e-5
    # The trace keeps the example input's path: some random inputs take the other one.
    assert result["tracing"]["inputs"] == 20 and 0 < result["tracing"]["inconsistent_share"] < 1
    assert doc["mismatches"] == [] and doc["compile_failures"] == []
    text = md.read_text()
    assert "| branchy | auto |" in text and "torch " in text and "onnxruntime " in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_hoist_ablation(tmp_path):
    from dycl.tools import bench

    out = tmp_path / "bench.json"
    assert bench.main(["--quick", "--backends", "torch", "--no-oracle", "--hoist-ablation", "--json", str(out)]) == 0
    result = json.loads(out.read_text())["models"]["branchy"]
    assert result["compile"]["torch no-hoist"]["status"] == "ok"
    for path in result["paths"]:
        latency = result["latency_ms"][path]
        assert result["hoist_ratio"][path]["torch"] == pytest.approx(latency["torch"] / latency["torch no-hoist"])
        assert result["error"][path]["torch no-hoist"] <= 1e-5


def test_tracing_inconsistency():
    from torch import nn

    from dycl.tools.bench import tracing_inconsistency

    class Branch(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x - 1

    class Scalar(nn.Module):
        def forward(self, x):
            return x.sum().item()  # a trace can only return tensors

    r = tracing_inconsistency(Branch(), [torch.ones(4)], 50)
    assert r["status"] == "ok" and r["inputs"] == 50 and 0 < r["inconsistent_share"] < 1
    assert tracing_inconsistency(nn.Linear(4, 4), [torch.ones(1, 4)], 10)["inconsistent_share"] == 0
    failed = tracing_inconsistency(Scalar(), [torch.ones(4)], 10)
    assert failed["status"] == "failed" and failed["reason"]


def test_chart_without_matplotlib(monkeypatch):
    from dycl.tools import bench

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    with pytest.raises(SystemExit, match="--chart needs matplotlib"):
        bench.main(["--quick", "--chart", "out.png"])
