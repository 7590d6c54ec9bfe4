"""Out-of-tree passes, dialects and backends (entry points `dycl.passes`,
`dycl.dialects`, `dycl.backends`), as an installed package would provide them.

The plugin is installed the way pip leaves a package: a module plus a
`<name>.dist-info/` (METADATA, entry_points.txt) on sys.path, which
importlib.metadata discovers; no pip run, so the tests stay fast and offline.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dycl import plugins

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

PLUGIN_SOURCE = '''
"""A tiny dycl plugin: a pass, a dialect and a backend."""
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.passes import ModulePass

from dycl.backends.torch_eager import TorchBackend


@dataclass(frozen=True)
class TagFuncsPass(ModulePass):
    """Tags every func.func with `plugin.tag`."""

    name = "tag-funcs"
    tag: str = "hello"

    def apply(self, ctx, op):
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                f.attributes["plugin.tag"] = StringAttr(self.tag)


def tag_funcs_pass():
    return TagFuncsPass


@irdl_op_definition
class MarkerOp(IRDLOperation):
    name = "plugtag.marker"


PLUGTAG = Dialect("plugtag", [MarkerOp])


def load_tagged_torch(path, target):
    """The loader the generated host imports for tagged_torch sub-DNNs (by import path)."""
    from dycl.runtime.loaders.torch_eager import load

    assert path.endswith(".tagged.pt2"), path
    return load(path, target)


class TaggedTorchBackend(TorchBackend):
    """Eager torch under another name, with files and a loader of its own."""

    name = "tagged_torch"
    auto_candidate = True
    loader = f"{__name__}:load_tagged_torch"

    def build(self, spec, target, out_dir):
        file = super().build(spec, target, out_dir)
        tagged = file.replace(".pt2", ".tagged.pt2")
        (out_dir / file).rename(out_dir / tagged)
        return tagged


class MissingLoaderBackend(TorchBackend):
    """Names a loader in a module that is not installed."""

    name = "missing_loader"
    loader = "dycl_demo_plugin_runtime_not_installed:load"


class SourceLoaderBackend(TorchBackend):
    """The old interface: loader source text, no import path."""

    name = "source_loader"
    loader = ""

    @staticmethod
    def loader_source():
        return "def load_source_loader(path, target): ...\\n"


NOT_A_PASS = 42
'''

ENTRY_POINTS = """\
[dycl.passes]
tag-funcs = {module}:tag_funcs_pass

[dycl.dialects]
plugtag = {module}:PLUGTAG

[dycl.backends]
tagged_torch = {module}:TaggedTorchBackend
"""


def make_plugin(root: Path, module: str, entry_points: str, dist: str = "dycl-demo-plugin") -> Path:
    """A package as pip would leave it in site-packages: the module and its .dist-info."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(PLUGIN_SOURCE)
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points.format(module=module))
    return root


def _installed(path: Path, module: str):
    sys.path.insert(0, str(path))
    plugins.clear_cache()
    try:
        yield path
    finally:
        sys.path.remove(str(path))
        sys.modules.pop(module, None)
        plugins.clear_cache()  # later tests see dycl without the plugin


@pytest.fixture
def plugin(tmp_path):
    yield from _installed(make_plugin(tmp_path / "site", "dycl_demo_plugin", ENTRY_POINTS), "dycl_demo_plugin")


def run(*args: str, pythonpath: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, cwd=ROOT, env=env)


MLIR = 'func.func @f() {\n  "plugtag.marker"() : () -> ()\n  func.return\n}\nfunc.func @g() {\n  func.return\n}\n'


def test_dycl_opt_runs_a_plugin_pass_on_a_plugin_dialect(tmp_path):
    site = make_plugin(tmp_path / "site", "dycl_demo_plugin", ENTRY_POINTS)
    (tmp_path / "in.mlir").write_text(MLIR)
    r = run("dycl-opt", str(tmp_path / "in.mlir"), "-p", 'tag-funcs{tag="from-plugin"}', pythonpath=site)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count('attributes {plugin.tag = "from-plugin"}') == 2, r.stdout
    assert '"plugtag.marker"() : () -> ()' in r.stdout
    # Without the plugin on the path, neither is known.
    r = run("dycl-opt", str(tmp_path / "in.mlir"), "-p", "tag-funcs", pythonpath=tmp_path)
    assert r.returncode == 1 and "unknown pass 'tag-funcs'" in r.stderr and "Traceback" not in r.stderr


def test_plugin_pass_loads_only_when_used(plugin):
    from dycl.registry import BUILTIN_PASSES, PASSES

    assert "tag-funcs" in PASSES and "tag-funcs" not in BUILTIN_PASSES
    assert "dycl_demo_plugin" not in sys.modules  # listed from metadata, not imported
    assert PASSES["tag-funcs"]().__name__ == "TagFuncsPass"
    assert "dycl_demo_plugin" in sys.modules


def test_compile_with_a_plugin_backend(plugin, branchy):
    import dycl

    model = branchy.make_model()
    cm = dycl.compile(model, branchy.example_inputs(), backend="tagged_torch")
    subs = cm.subgraphs
    assert len(subs) == 3
    assert {s["backend"] for s in subs.values()} == {"tagged_torch"}
    assert all(s["file"].endswith(".tagged.pt2") for s in subs.values())  # built by the plugin
    assert "_LOADERS = {'tagged_torch': 'dycl_demo_plugin:load_tagged_torch'}" in (cm.path / "host.py").read_text()
    reloaded = dycl.load(cm.path)
    with torch.no_grad():
        for (x,) in branchy.branch_inputs().values():
            assert torch.allclose(reloaded(x), model(x), atol=1e-5)
    assert "backend: tagged_torch" in cm.hcfg.to_dot()


BAD_LOADERS = """\
[dycl.backends]
missing_loader = {module}:MissingLoaderBackend
source_loader = {module}:SourceLoaderBackend
"""


@pytest.fixture
def bad_loaders(tmp_path):
    yield from _installed(make_plugin(tmp_path / "site", "dycl_loader_plugin", BAD_LOADERS, "dycl-loader-plugin"),
                          "dycl_loader_plugin")


def test_a_plugin_loader_that_cannot_be_imported_is_a_clear_error(bad_loaders, branchy):
    import dycl
    from dycl.runtime.loaders import LoaderError

    with pytest.raises(LoaderError) as e:
        dycl.compile(branchy.make_model(), branchy.example_inputs(), backend="missing_loader")
    assert str(e.value) == (
        "error: cannot import the loader of backend 'missing_loader' (dycl_demo_plugin_runtime_not_installed:load): "
        "ModuleNotFoundError: No module named 'dycl_demo_plugin_runtime_not_installed'\n"
        "  note: backend 'missing_loader' comes from plugin package 'dycl-loader-plugin' (missing_loader = "
        "dycl_loader_plugin:MissingLoaderBackend); the loader it names must be importable")


def test_loading_an_artifact_whose_plugin_loader_is_gone_names_it(plugin, branchy, tmp_path, monkeypatch):
    import dycl

    model = branchy.make_model()
    dycl.compile(model, branchy.example_inputs(), backend="tagged_torch", out_dir=tmp_path / "art")
    monkeypatch.setattr(sys.modules["dycl_demo_plugin"], "load_tagged_torch", 42)  # no longer a function
    with pytest.raises(dycl.DyclError, match=r"the loader of backend 'tagged_torch' "
                                             r"\(dycl_demo_plugin:load_tagged_torch\) is 42, not a function"):
        dycl.load(tmp_path / "art")(*branchy.example_inputs())


def test_a_plugin_backend_without_a_loader_path_says_so(bad_loaders):
    from dycl.backends.base import get_backend
    from dycl.diagnostics import UsageError

    with pytest.raises(UsageError) as e:
        get_backend("source_loader")
    assert ("backend 'source_loader' (SourceLoaderBackend) needs the import path of its loader "
            "(loader_source() is no longer read): it names none") in str(e.value)
    assert 'set the class attribute loader = "package.module:function"' in str(e.value)


def test_auto_policy_measures_plugin_backends_that_ask(plugin):
    from torch import fx, nn

    from dycl.backends.auto import candidates_for

    linear = fx.symbolic_trace(nn.Sequential(nn.Linear(4, 4)))
    assert candidates_for(linear, "llvm")[0] == ["torch", "onnxruntime", "tvm", "tagged_torch"]
    assert candidates_for(linear, "cuda")[0] == ["tvm"]


CLASHING = """\
[dycl.passes]
shape-inference = {module}:tag_funcs_pass

[dycl.backends]
torch = {module}:TaggedTorchBackend
"""


@pytest.fixture
def clashing(tmp_path):
    yield from _installed(make_plugin(tmp_path / "site", "dycl_clash_plugin", CLASHING, "dycl-clash"),
                          "dycl_clash_plugin")


def test_a_plugin_named_like_a_builtin_is_an_error(clashing):
    from dycl.backends.base import get_backend
    from dycl.registry import PASSES

    with pytest.raises(plugins.PluginError) as e:
        PASSES["inline-calls"]
    assert ("pass 'shape-inference' from plugin package 'dycl-clash' (shape-inference = "
            "dycl_clash_plugin:tag_funcs_pass) clashes with dycl's built-in pass 'shape-inference'") in str(e.value)
    with pytest.raises(plugins.PluginError, match="backend 'torch' from plugin package 'dycl-clash' .* clashes "
                                                  "with dycl's built-in backend 'torch'"):
        get_backend("torch")
    r = run("dycl-opt", "-p", "inline-calls", pythonpath=clashing)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "dycl-opt: error: pass 'shape-inference' from plugin package 'dycl-clash'" in r.stderr
    assert "note: rename the pass in the plugin's entry points (dycl.passes)" in r.stderr


def test_a_plugin_named_like_an_xdsl_pass_is_an_error(tmp_path):
    for _ in _installed(make_plugin(tmp_path / "site", "dycl_x_plugin",
                                    "[dycl.passes]\ncanonicalize = {module}:tag_funcs_pass\n", "dycl-x"),
                        "dycl_x_plugin"):
        from dycl.registry import PASSES

        with pytest.raises(plugins.PluginError, match="clashes with xDSL's built-in pass 'canonicalize'"):
            list(PASSES)


def test_a_plugin_giving_the_wrong_object_says_so(tmp_path):
    eps = "[dycl.passes]\ntag-funcs = {module}:NOT_A_PASS\n[dycl.backends]\nbad = {module}:NOT_A_PASS\n"
    for _ in _installed(make_plugin(tmp_path / "site", "dycl_bad_plugin", eps, "dycl-bad"), "dycl_bad_plugin"):
        from dycl.backends.base import get_backend
        from dycl.registry import PASSES

        with pytest.raises(plugins.PluginError, match=r"'dycl-bad' \(tag-funcs = dycl_bad_plugin:NOT_A_PASS\) "
                                                      "gives 42: expected a ModulePass subclass"):
            PASSES["tag-funcs"]()
        with pytest.raises(plugins.DyclError, match="gives 42 for backend 'bad': expected a dycl.backends.base.Backend"):
            get_backend("bad")


def test_registering_a_backend_first_keeps_the_builtin_ones():
    # A fresh interpreter: the bug needed registration before the very first lookup.
    probe = (
        "from dycl.backends.base import backend_names, get_backend, register_backend\n"
        "from dycl.backends.torch_eager import TorchBackend\n"
        "class Mine(TorchBackend):\n    name = 'mine'\n"
        "register_backend('mine', Mine)\n"
        "print(backend_names())\n"
        "print(get_backend('onnxruntime').name, get_backend('mine').name)\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["['inductor', 'mine', 'onnxruntime', 'torch', 'tvm']", "onnxruntime mine"]


def test_register_backend_refuses_taken_names(monkeypatch):
    from dycl.backends import base
    from dycl.diagnostics import UsageError

    monkeypatch.setattr(base, "_REGISTERED", {})
    for taken in ("tvm", "auto"):
        with pytest.raises(UsageError, match=f"cannot register backend '{taken}': dycl's built-in"):
            base.register_backend(taken, base.get_backend("torch").__class__)
    with pytest.raises(UsageError, match="backend name 'my-backend' must be a Python identifier"):
        base.register_backend("my-backend", base.get_backend("torch").__class__)
