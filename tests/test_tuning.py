"""`tune_trials`: MetaSchedule-tuned TVM builds, with a persistent tuning database."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import dycl
from dycl.demo import max_abs_error

pytestmark = pytest.mark.slow


def _records(db_dir):
    (target_dir,) = list(db_dir.iterdir())  # one database per target
    return (target_dir / "database_tuning_record.json").read_text().splitlines()


def test_tuned_build_matches_eager_and_reuses_the_database(monkeypatch, tmp_path, branchy):
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache1"))
    db = tmp_path / "tuning"
    model = branchy.make_model()
    start = time.perf_counter()
    cm = dycl.compile(model, branchy.example_inputs(), tune_trials=1, tuning_dir=db)
    first = time.perf_counter() - start
    records = _records(db)
    workloads = {json.loads(r)[0] for r in records}
    assert records and len(workloads) >= 2  # more than one task was tuned
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5
    # A fresh build cache, the same database: every task is found, none tuned again.
    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache2"))
    start = time.perf_counter()
    again = dycl.compile(model, branchy.example_inputs(), tune_trials=1, tuning_dir=db)
    assert _records(db) == records
    assert time.perf_counter() - start < first
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), again(*x)) <= 1e-5


def test_tuning_needs_an_llvm_target(branchy):
    with pytest.raises(ValueError, match="--tune-trials needs --target llvm"):
        dycl.compile(branchy.make_model(), branchy.example_inputs(), target="cuda", tune_trials=4)


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--tune-trials", "4", "--target", "cuda"], "dycl: error: tuning measures kernels on this machine's CPU"),
        (["--tune-trials", "-1"], "dycl: error: tune_trials must be >= 0"),
        (["--jobs", "0"], "dycl: error: --jobs must be at least 1, got 0"),
    ],
)
def test_cli_rejects_bad_build_options(tmp_path, flags, message):
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "dycl.cli", "compile", "examples/branchy.py:make_model", "--input", "1x16xf32",
         "-o", str(out), *flags],
        capture_output=True, text=True, cwd=str(Path(__file__).resolve().parents[1]),
    )
    assert r.returncode == 1
    assert message in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()
