"""`dycl.load` refuses an artifact that is not exactly what dycl wrote, naming the file
and the problem, before any of its code runs (issue #12's artifact checks)."""

import json
import shutil

import pytest
import torch

import dycl
from dycl.demo import max_abs_error


@pytest.fixture(scope="module")
def artifact(tmp_path_factory, branchy):
    out = tmp_path_factory.mktemp("sealed") / "art"
    dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="torch", out_dir=out)
    return out


def _manifest(art):
    return json.loads((art / "manifest.json").read_text())


def _write_manifest(art, m):
    (art / "manifest.json").write_text(json.dumps(m))


def _sub(art):
    return next(iter(_manifest(art)["subgraphs"].values()))["file"]


def _truncate(art):
    f = art / _sub(art)
    f.write_bytes(f.read_bytes()[:100])


def _edit_host(art):
    with open(art / "host.py", "a") as f:
        f.write("\nopen('PWNED', 'w').close()\n")


def _lack(key):
    def change(art):
        m = _manifest(art)
        del m[key]
        _write_manifest(art, m)
    return change


def _set(path, value):
    def change(art):
        m = _manifest(art)
        node = m
        for k in path[:-1]:
            node = node[k] if k != "*" else next(iter(node.values()))
        node[path[-1]] = value
        _write_manifest(art, m)
    return change


def _outside(art):
    m = _manifest(art)
    m["files"]["../outside.txt"] = "0" * 64
    _write_manifest(art, m)


CORRUPTIONS = {
    "missing sub-DNN": (lambda art: (art / _sub(art)).unlink(), "is missing"),
    "truncated sub-DNN": (_truncate, "SHA-256 mismatch"),
    "edited host.py": (_edit_host, "'host.py' differs from the file dycl wrote"),
    "manifest not JSON": (lambda art: (art / "manifest.json").write_text("{not json"), "manifest.json does not parse"),
    "manifest lacks a key": (_lack("subgraphs"), "manifest.json lacks subgraphs"),
    "unknown backend": (_set(["subgraphs", "*", "backend"], "evil"), "unknown backends: evil"),
    "path outside": (_outside, "names '../outside.txt', outside the artifact"),
    "other torch": (_set(["versions", "torch"], "1.0.0"), "built against other versions: torch 1.0.0"),
    "older format": (_set(["version"], 1), "format version 1"),
    "edited input shape": (_set(["inputs", 0, "shape"], [4, 16]), "manifest.json differs from the one dycl wrote"),
    "edited signature": (_set(["signature", "inputs"], []), "manifest.json differs from the one dycl wrote"),
    "unvouched host": (lambda art: (lambda m: (m["files"].pop("host.py"), _write_manifest(art, m)))(_manifest(art)),
                       "does not vouch for host.py"),
}


def test_a_whole_artifact_loads(artifact, branchy):
    model, cm = branchy.make_model(), dycl.load(artifact)
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5
    m = _manifest(artifact)
    assert m["outputs"] == [{"shape": [1, 16], "dtype": "float32"}]
    assert set(m["versions"]) >= {"dycl", "torch"} and "host.py" in m["files"]


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_a_damaged_artifact_is_refused_before_it_runs(artifact, tmp_path, monkeypatch, name):
    corrupt, message = CORRUPTIONS[name]
    art = tmp_path / "art"
    shutil.copytree(artifact, art)
    corrupt(art)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(dycl.DyclError, match="cannot load the compiled model in") as e:
        dycl.load(art)
    assert message in str(e.value)
    assert not (tmp_path / "PWNED").exists()
