"""Inspecting or loading an artifact runs no code it smuggles in (issue #13):
pickles are read weights-only, `dycl hcfg` reads the IR, tuning records stay private."""

import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

import dycl

ROOT = Path(__file__).resolve().parents[1]


class _Payload:
    """Unpickling it runs `touch MARKER` (what a planted pickle would do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _saved(obj) -> bytes:
    import io

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def torch_artifact(tmp_path_factory, branchy):
    out = tmp_path_factory.mktemp("pt2") / "art"
    dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="torch", out_dir=out)
    return out


def _reseal(art: Path) -> None:
    """An attacker who rewrites the manifest too: the hashes match the planted files,
    so what is tested is the loader's own defence."""
    import json

    from dycl.runtime.artifact import seal

    manifest = json.loads((art / "manifest.json").read_text())
    (art / "manifest.json").write_text(json.dumps(seal(art, manifest)))


def _rewrite_zip(path: Path, change) -> None:
    with zipfile.ZipFile(path) as z:
        entries = [(i, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w") as z:
        for info, data in entries:
            z.writestr(info, change(info.filename, data))


def test_a_planted_pickle_in_a_pt2_sub_dnn_never_runs(torch_artifact, tmp_path):
    import shutil

    art = tmp_path / "art"
    shutil.copytree(torch_artifact, art)
    marker = tmp_path / "pwned"
    pt2 = next(art.glob("*.pt2"))
    planted = []

    def change(name, data):
        # The sample inputs: a pickle torch.export.load retries with weights_only=False.
        if name.endswith("sample_inputs/model.pt"):
            planted.append(name)
            return _saved((_Payload(marker),))
        return data

    _rewrite_zip(pt2, change)
    assert planted, "the .pt2 archive should hold a pickle to plant"
    with pytest.raises(dycl.DyclError, match="SHA-256 mismatch"):
        dycl.load(art)  # the manifest's hashes catch it first
    _reseal(art)
    with pytest.raises(dycl.DyclError, match="cannot load the compiled model .* UnpicklingError"):
        dycl.load(art)(torch.randn(1, 16))
    assert not marker.exists()


def test_a_planted_fallback_model_pickle_is_refused(tmp_path):
    src = tmp_path / "logged.py"
    src.write_text(
        "import logging\nimport torch\nfrom torch import nn\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cpu', enabled=False):\n            y = self.fc(x)\n"
        "        return y if y.sum() > 0 else -y\n\n"
        "def make():\n    return M()\n"
    )
    out = tmp_path / "art"
    r = subprocess.run([sys.executable, "-m", "dycl.cli", "compile", f"{src}:make", "--input", "1x4xf32",
                        "-o", str(out), "--backend", "torch"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert (out / "model.pt").exists()
    marker = tmp_path / "pwned"
    probe = f"import dycl, torch\ndycl.load({str(out)!r})(torch.randn(1, 4))\n"
    # The genuine pickle loads under the weights-only unpickler.
    ok = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr[-2000:]
    torch.save({"model": _Payload(marker)}, out / "model.pt")
    _reseal(out)
    bad = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode != 0
    assert "posix.system" in bad.stderr and "refusing to load it" in bad.stderr, bad.stderr[-2000:]
    assert not marker.exists()


def test_drawing_an_artifact_runs_none_of_its_code(torch_artifact, tmp_path):
    import shutil

    art = tmp_path / "art"
    shutil.copytree(torch_artifact, art)
    marker = tmp_path / "pwned"
    (art / "host.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    r = subprocess.run([sys.executable, "-m", "dycl.cli", "hcfg", str(art)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("digraph") and "HCFG:" in r.stderr
    assert not marker.exists()
    r = subprocess.run([sys.executable, "-m", "dycl.cli", "hcfg", str(tmp_path)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 1 and "is not a dycl artifact" in r.stderr and "Traceback" not in r.stderr


def test_tuning_records_without_a_cache_are_private(monkeypatch):
    from dycl.backends.base import BuildOptions
    from dycl.backends.tuning import database_dir
    from dycl.backends.tvm import tvm_target
    from dycl.backends.base import Target

    monkeypatch.setenv("DYCL_CACHE_DIR", "off")
    path = database_dir(BuildOptions(tune_trials=1), tvm_target(Target.parse("llvm")))
    base = path.parent
    assert not str(path).startswith("/tmp/dycl/")
    assert base.owner() == Path.home().owner() or os.getuid() == base.stat().st_uid
    assert stat.S_IMODE(base.stat().st_mode) == 0o700


def test_the_cache_directory_is_created_private(monkeypatch, tmp_path):
    from dycl.build_cache import cache_dir

    monkeypatch.delenv("DYCL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = cache_dir()
    assert root == tmp_path / "xdg" / "dycl"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def _loaded_in_a_new_process(tmp_path, name: str, source: str, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The model `make()` in `source` (a module `name`, importable only while compiling),
    compiled and saved here, then loaded and called in a fresh process: (eager, loaded)."""
    import importlib.util

    src = tmp_path / f"{name}.py"
    src.write_text(source)
    spec = importlib.util.spec_from_file_location(name, src)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        model = module.make()
        cm = dycl.compile(model, [x], backend="torch")
        cm.save(tmp_path / "art")
        want = model(x)
    finally:
        del sys.modules[name]
    torch.save(x, tmp_path / "x.pt")
    probe = (f"import dycl, torch\nx = torch.load({str(tmp_path / 'x.pt')!r})\n"
             f"torch.save(dycl.load({str(tmp_path / 'art')!r})(x), {str(tmp_path / 'y.pt')!r})\n")
    ok = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr[-2000:]
    return want, torch.load(tmp_path / "y.pt")


def test_a_model_holding_numpy_arrays_loads_and_other_numpy_names_do_not(tmp_path):
    """`self.mean = np.zeros(3)` (an observation normaliser): the artifact saved, and
    dycl.load refused its own pickle ('numpy.dtype ... outside the model's modules').
    Arrays, dtypes and scalars load now; any other numpy name is still refused."""
    from dycl.diagnostics import DyclError
    from dycl.pyregion import _pickle_globals

    want, got = _loaded_in_a_new_process(tmp_path, "normalised", (
        "import numpy as np\nimport torch\nfrom torch import nn\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 2)\n"
        "        self.mean = np.arange(3.0)\n        self.scale = np.float32(2.0)\n\n"
        "    def forward(self, obs):\n"
        "        a = (obs.detach().numpy() - self.mean) / self.scale\n"
        "        return self.fc(torch.from_numpy(a).float())\n\n"
        "def make():\n    return M()\n"), torch.randn(2, 3))
    assert torch.allclose(got, want)
    with pytest.raises(DyclError, match="not a numpy array or dtype"):
        _pickle_globals(["numpy.load"], set())


def test_a_model_with_a_rebound_forward_and_a_namespace_config_loads(tmp_path):
    """SDN's `self.forward = self.forward_wo_pooling` pickled through `getattr`, and an
    HF-style `self.config = SimpleNamespace(...)`: dycl.load refused the artifact
    cm.save had just written. A bound method is saved as `bound_method(obj, name)`,
    which returns nothing but a function of the object's class; `getattr` stays refused."""
    from dycl.diagnostics import DyclError
    from dycl.pyregion import _pickle_globals, bound_method

    want, got = _loaded_in_a_new_process(tmp_path, "rebound", (
        "from types import SimpleNamespace\nimport torch\nfrom torch import nn\n\n"
        "class Head(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 3)\n"
        "        self.forward = self.forward_wo_pooling\n\n"
        "    def forward_wo_pooling(self, x):\n        return self.fc(x) * 2\n\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.head = Head()\n"
        "        self.config = SimpleNamespace(num_labels=3)\n\n"
        "    def forward(self, x):\n        out = self.head(x) + self.config.num_labels\n"
        "        print('host side', end='')\n        return out\n\n"
        "def make():\n    return M()\n"), torch.randn(2, 4))
    assert torch.equal(got, want)
    with pytest.raises(DyclError, match="outside the model's modules"):
        _pickle_globals(["builtins.getattr"], set())
    with pytest.raises(DyclError, match="not a method"):
        bound_method(torch.nn.Linear(2, 2), "weight")
    with pytest.raises(DyclError, match="not a method"):
        bound_method(torch.nn.Linear(2, 2), "__class__")


_SCRIPT = '''
import sys, shutil, warnings, torch, torch.nn as nn, dycl
warnings.simplefilter("ignore")
class Model(nn.Module):
    def helper(self, h):
        return h * {scale}
    def forward(self, x):
        h = self.helper(x)
        print("", end="")  # a fallback region: the artifact holds the pickled model
        return self.helper(h) + 1
if sys.argv[1] == "save":
    c = dycl.compile(Model().eval(), (torch.ones(3),), backend="torch")
    shutil.rmtree(sys.argv[2], ignore_errors=True)
    c.save(sys.argv[2])
print(dycl.load(sys.argv[2])(torch.ones(3)).tolist())
'''


def test_a_model_defined_in_the_compiling_script_loads_only_where_that_script_runs(tmp_path):
    """The pickle names `__main__.Model`: another script's `Model` ran instead (it gave
    [1, 1, 1] here, the model [5, 5, 5]); now a clear error. The same script, run again
    (or `python -c` code, whose class has no source to check), is told apart."""
    art = tmp_path / "art"
    compiling = tmp_path / "compiling.py"
    compiling.write_text(_SCRIPT.format(scale=2))
    other = tmp_path / "other.py"
    other.write_text(_SCRIPT.format(scale=100))

    def run(script, mode):
        r = subprocess.run([sys.executable, str(script), mode, str(art)], capture_output=True, text=True,
                           cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
        return r.returncode, r.stdout.strip().splitlines()[-1:] , r.stderr

    assert run(compiling, "save")[:2] == (0, ["[5.0, 5.0, 5.0]"])
    assert run(compiling, "load")[:2] == (0, ["[5.0, 5.0, 5.0]"])
    rc, out, err = run(other, "load")
    assert rc != 0 and "was defined in the script that compiled it (__main__)" in err, (out, err)
