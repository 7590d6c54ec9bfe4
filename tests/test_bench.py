"""Smoke test of the benchmark script (tools/bench.py): it runs and writes its numbers."""

import json

import pytest


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
