"""The C++ host: eager == in-process compiled == reloaded artifact == C++ host on
every path (TVM sub-DNNs, Inductor's through libtorch, and both in one host), its C
API embedded in a C program, and its refusals (Python in the host, backends C++
cannot load, wrong inputs, a changed executable)."""

from __future__ import annotations

import copy
import functools
import importlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import dycl
from dycl.demo import float64_outputs
from dycl.diagnostics import DyclError, PassError, UsageError

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the C++ host needs g++")

ZOO = ["branchy", "early_exit", "shallow_deep", "skipnet", "skipnet_rnn", "blockdrop", "captioner", "router"]


def run_cpp(artifact: Path, inputs, tmp: Path) -> tuple[list[np.ndarray], subprocess.CompletedProcess]:
    """Outputs of the artifact's `dycl_model` command on `inputs`, read back from .npy."""
    tmp.mkdir(parents=True, exist_ok=True)
    files = []
    for i, x in enumerate(inputs):
        files.append(str(tmp / f"in_{i}.npy"))
        np.save(files[-1], x.numpy())
    out = tmp / "out"
    done = subprocess.run([str(artifact / "dycl_model"), str(artifact), "-o", str(out), *files],
                          capture_output=True, text=True)
    outputs = [np.load(out / f"output_{i}.npy") for i in range(done.stdout.count("output "))]
    return outputs, done


def leaves(v) -> list:
    """Flattened outputs as tensors; Python floats are float64, as .npy holds them."""
    return [torch.as_tensor(x, dtype=torch.float64) if isinstance(x, float) else torch.as_tensor(x)
            for x in torch.utils._pytree.tree_flatten(v)[0]]


def assert_same(expected, got: list, exact_ints: bool = True, exact=None) -> None:
    """`got` equals eager's `expected`: ints exactly, floats within 1e-5, or where
    further (another summation order over 100+ layers: blockdrop's logits reach 42, and
    eager itself is 5e-6 from the float64 answer there) no further from the float64
    answer `exact` (leaves, or a function giving them or None) than twice eager's own
    distance from it."""
    want = leaves(expected)
    assert len(want) == len(got)
    for k, (w, g) in enumerate(zip(want, got)):
        g = torch.from_numpy(np.asarray(g)) if not isinstance(g, torch.Tensor) else g
        assert tuple(w.shape) == tuple(g.shape)
        assert str(w.dtype) == str(g.dtype), (w.dtype, g.dtype)
        if w.is_floating_point():
            err = (w.double() - g.double()).abs().max().item() if w.numel() else 0.0
            if err > 1e-5:
                exact = exact() if callable(exact) else exact
                assert exact is not None, f"{err:.2g} from eager"
                x = exact[k].double()
                eager_err, our_err = (w.double() - x).abs().max().item(), (g.double() - x).abs().max().item()
                assert our_err <= 2 * eager_err + 1e-6, f"{err:.2g} from eager, {our_err:.2g} from float64 " \
                                                       f"(eager: {eager_err:.2g})"
        else:
            assert torch.equal(w, g)  # token ids, flags: exact


def check_model(name: str, out: Path, tmp: Path) -> None:
    mod = importlib.import_module(name)
    model = mod.make_model()
    cm = dycl.compile(model, mod.example_inputs(), host="cpp", out_dir=out)
    assert (out / "dycl_model").exists() and (out / "libdycl_model.so").exists()
    assert cm.manifest["cpp_host"]["executable"] == "dycl_model"
    assert_every_path(model, cm, out, mod.branch_inputs(), tmp)


def assert_every_path(model, cm, out: Path, paths: dict, tmp: Path) -> None:
    """eager == in-process == reloaded artifact == C++ host, on each path's inputs."""
    reloaded = dycl.load(out)
    with torch.no_grad():
        for path, x in paths.items():
            expected = model(*x)
            exact = functools.partial(float64_outputs, model, x)
            assert_same(expected, leaves(cm(*x)), exact=exact)
            assert_same(expected, leaves(reloaded(*x)), exact=exact)
            got, done = run_cpp(out, x, tmp / path)
            assert done.returncode == 0, done.stderr
            assert_same(expected, got, exact=exact)


@pytest.fixture(scope="module")
def branchy_cpp(tmp_path_factory):
    out = tmp_path_factory.mktemp("cpp") / "branchy"
    check_model("branchy", out, tmp_path_factory.mktemp("runs"))
    return out


def test_branchy_every_path_in_cpp(branchy_cpp):
    manifest = dycl.load(branchy_cpp).manifest
    assert set(manifest["files"]) >= {"host.cpp", "dycl_model", "libdycl_model.so", "build.sh", "CMakeLists.txt"}


def test_wrong_input_is_a_clear_error(branchy_cpp, tmp_path):
    _, done = run_cpp(branchy_cpp, [torch.randn(2, 16)], tmp_path)
    assert done.returncode == 1
    assert "input 0: expected shape/dtype 1x16 float32, got 2x16 float32" in done.stderr
    assert "Traceback" not in done.stderr


def test_dycl_run_host_cpp(branchy_cpp, tmp_path):
    from dycl.cli import main

    x = torch.randn(1, 16)
    np.save(tmp_path / "x.npy", x.numpy())
    main(["run", str(branchy_cpp), "--host", "cpp", "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "o")])
    import branchy

    with torch.no_grad():
        expected = branchy.make_model()(x)
    assert_same(expected, [np.load(tmp_path / "o" / "output_0.npy")])


def test_changed_executable_is_refused(branchy_cpp, tmp_path):
    from dycl.cli import main

    copy = tmp_path / "art"
    shutil.copytree(branchy_cpp, copy)
    with open(copy / "dycl_model", "ab") as f:
        f.write(b"\0")
    with pytest.raises(SystemExit) as e:
        main(["run", str(copy), "--host", "cpp"])
    assert e.value.code == 1


# What the C programs below share: a 1x16 float32 CPU input borrowed from `x`.
C_PRELUDE = r"""
#include <stdio.h>
#include <string.h>
#include "dycl_model.h"

static DLManagedTensor input_1x16(float* x, int64_t* shape) {
  DLManagedTensor in;
  memset(&in, 0, sizeof in);
  in.dl_tensor.data = x;
  in.dl_tensor.device.device_type = kDLCPU;
  in.dl_tensor.ndim = 2;
  in.dl_tensor.dtype.code = kDLFloat;
  in.dl_tensor.dtype.bits = 32;
  in.dl_tensor.dtype.lanes = 1;
  in.dl_tensor.shape = shape;
  return in;
}
"""


def build_c_program(source: str, art, tmp_path, name: str):
    """`source` compiled against the artifact's C API (libdycl_model.so)."""
    from dycl.host.cpp_build import tvm_paths

    includes, _ = tvm_paths()
    (tmp_path / f"{name}.c").write_text(source)
    exe = tmp_path / name
    subprocess.run(["gcc", "-std=c99", str(tmp_path / f"{name}.c"), "-o", str(exe), f"-I{art}",
                    *[f"-I{i}" for i in includes], f"-L{art}", "-ldycl_model", f"-Wl,-rpath,{art}"], check=True)
    return exe


CAPI_PROGRAM = C_PRELUDE + r"""

int main(int argc, char** argv) {
  float x[16];
  FILE* f = fopen(argv[2], "rb");
  if (!f || fread(x, sizeof x, 1, f) != 1) return 3;
  fclose(f);
  dycl_model* m = dycl_model_load(argv[1]);
  if (!m) { fprintf(stderr, "%s\n", dycl_last_error()); return 1; }
  int64_t shape[2] = {1, 16};
  DLManagedTensor in = input_1x16(x, shape);
  DLManagedTensor* ins[1] = {&in};
  int n = 0;
  DLManagedTensor** out = NULL;
  if (dycl_model_run(m, 1, ins, &n, &out) != 0) { fprintf(stderr, "%s\n", dycl_last_error()); return 1; }
  const float* y = (const float*)out[0]->dl_tensor.data;
  for (int i = 0; i < 16; ++i) printf("%.9g\n", y[i]);
  for (int i = 0; i < n; ++i) out[i]->deleter(out[i]);
  dycl_free_outputs(out, n);
  dycl_model_free(m);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler")
def test_c_program_embeds_the_model(branchy_cpp, tmp_path):
    exe = build_c_program(CAPI_PROGRAM, branchy_cpp, tmp_path, "embed")
    import branchy

    model = branchy.make_model()
    for x in branchy.branch_inputs().values():
        x[0].numpy().tofile(tmp_path / "x.bin")
        done = subprocess.run([str(exe), str(branchy_cpp), str(tmp_path / "x.bin")], capture_output=True,
                              text=True, check=True)
        got = torch.tensor([float(v) for v in done.stdout.split()]).reshape(1, 16)
        with torch.no_grad():
            assert (model(*x) - got).abs().max().item() <= 1e-5


class HandsOutBuffers(torch.nn.Module):
    """Outputs a backend may hand out as buffers it does not own: the input (`x * 1`
    simplified away) and a constant (one buffer for every call)."""

    def forward(self, x):
        if x.sum() > 0:
            return x * 1, torch.zeros(1, 16)
        return x + 0, torch.ones(1, 16)


OWNERSHIP_PROGRAM = C_PRELUDE + r"""

int main(int argc, char** argv) {
  float x[16];
  for (int i = 0; i < 16; ++i) x[i] = (float)(i + 1);
  dycl_model* m = dycl_model_load(argv[1]);
  if (!m) { fprintf(stderr, "%s\n", dycl_last_error()); return 1; }
  int64_t shape[2] = {1, 16};
  DLManagedTensor in = input_1x16(x, shape);
  DLManagedTensor* ins[1] = {&in};
  for (int call = 0; call < 2; ++call) {
    int n = 0;
    DLManagedTensor** out = NULL;
    if (dycl_model_run(m, 1, ins, &n, &out) != 0) { fprintf(stderr, "%s\n", dycl_last_error()); return 1; }
    for (int k = 0; k < n; ++k) {
      float* y = (float*)out[k]->dl_tensor.data;
      printf("%g %g\n", y[0], y[15]);
      for (int i = 0; i < 16; ++i) y[i] += 100;  /* the caller's to write */
      out[k]->deleter(out[k]);
    }
    dycl_free_outputs(out, n);
  }
  printf("%g %g\n", x[0], x[15]);
  dycl_model_free(m);
  return 0;
}
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler")
def test_outputs_are_the_callers_own(tmp_path):
    """Writing to one call's outputs changes neither the input nor the next call's."""
    art = tmp_path / "art"
    dycl.compile(HandsOutBuffers(), [torch.randn(1, 16).abs()], host="cpp", out_dir=art)
    exe = build_c_program(OWNERSHIP_PROGRAM, art, tmp_path, "own")
    done = subprocess.run([str(exe), str(art)], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:5] == ["1 16", "0 0", "1 16", "0 0", "1 16"], done.stdout


class WritesState(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        self.calls = self.calls + 1
        y = self.fc(x)
        if y.sum() > 0:
            return y
        return -y


def test_python_in_the_host_is_refused_with_locations(tmp_path):
    with pytest.raises(PassError) as e:
        dycl.compile(WritesState(), [torch.randn(1, 4)], host="cpp", out_dir=tmp_path / "out")
    text = e.value.format()
    assert "the C++ host cannot run this program" in text
    assert "fallback region" in text and "test_cpp_host.py:" in text
    assert not (tmp_path / "out").exists()  # nothing half-built is left


def test_backends_cpp_cannot_load_are_refused():
    with pytest.raises(UsageError, match=r"the C\+\+ host loads sub-DNNs built by inductor, tvm;"):
        dycl.compile(WritesState(), [torch.randn(1, 4)], backend="onnxruntime", host="cpp")


def test_artifact_without_cpp_host(branchy_compiled, tmp_path):
    from dycl.cli import run_cpp_host
    import argparse

    _, cm = branchy_compiled
    with pytest.raises(DyclError, match="has no C\\+\\+ host"):
        run_cpp_host(argparse.Namespace(artifact=str(cm.path), input=None, seed=0, output=None))


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ZOO if n != "branchy"])
def test_zoo_every_path_in_cpp(name, tmp_path):
    check_model(name, tmp_path / name, tmp_path / "runs")


class Halving(torch.nn.Module):
    """A data-dependent `while` on the host, Python int arithmetic, an assert, and
    an int output: all C++ on the host."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        steps = 0
        while x.abs().max() > 1.0:
            x = x / 2
            steps += 1
        k = int(x.argmax())
        assert k < 8, "index out of range"
        y = self.fc(x)
        if k % 2 == 0 and k > 1:
            y = y * 2
        return y, steps


def test_host_loops_and_scalars_in_cpp(tmp_path):
    torch.manual_seed(0)
    model = Halving().eval()
    out = tmp_path / "halving"
    cm = dycl.compile(model, [torch.randn(1, 8)], host="cpp", out_dir=out)
    source = (out / "host.cpp").read_text()
    assert "for (int64_t iteration" in source and "checked_add(" in source
    inputs = [torch.randn(1, 8) * s for s in (0.1, 3.0, 100.0, 1e4)]
    inputs.append(torch.tensor([[0.1, 0.2, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0]]))  # k = 2: the doubled path
    for i, x in enumerate(inputs):
        with torch.no_grad():
            expected = model(x)
        assert_same(expected, leaves(cm(x)))
        got, done = run_cpp(out, [x], tmp_path / str(i))
        assert done.returncode == 0, done.stderr
        assert_same(expected, got)


# Inductor sub-DNNs (AOTInductor packages through libtorch, dycl_aoti.h) in the C++ host.

CPP_HOST_IR = Path(__file__).resolve().parent.parent / "lit_tests" / "dycl-opt" / "cpp-host.mlir"


def _emit_cpp(ir: str, device: str = "cpu") -> str:
    """host.cpp for the IR (as `dycl-opt -p lower-host-scalars -t cpp-host`)."""
    from xdsl.parser import Parser

    from dycl.compiler import context
    from dycl.host.cpp import emit_host_cpp
    from dycl.registry import BUILTIN_PASSES

    module = Parser(context(), ir).parse_module()
    BUILTIN_PASSES["lower-host-scalars"]()().apply(context(), module)
    return emit_host_cpp(module, "model", device)


def test_host_with_an_inductor_sub_dnn_is_printed_with_aoti():
    """A host whose sub-DNNs are all TVM's never sees libtorch; one Inductor sub-DNN
    makes it define DYCL_WITH_AOTI (dycl_aoti.h) and load that sub-DNN as an AotiSubDnn."""
    from dycl.host.cpp_build import uses_aoti

    ir = CPP_HOST_IR.read_text()
    mixed = ir.replace('@sub_1(%x: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {dycl.subgraph, dycl.backend = "tvm"}',
                       '@sub_1(%x: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {dycl.subgraph, dycl.backend = "inductor"}')
    assert mixed != ir
    tvm_only, source = _emit_cpp(ir), _emit_cpp(mixed)
    assert not uses_aoti(tvm_only) and "AotiSubDnn" not in tvm_only
    assert uses_aoti(source)
    assert "#define DYCL_WITH_AOTI 1" in source.split('#include "dycl_runtime.h"')[0]
    assert "  dycl::SubDnn sub_0;\n  dycl::AotiSubDnn sub_1;\n" in source
    assert 'p->sub_1 = dycl::AotiSubDnn(dir + "/sub_1.aoti.pt2", "sub_1", kDLCPU);' in source
    assert "compiled sub-DNNs (TVM, Inductor)" in source
    with pytest.raises(PassError, match=r"runs Inductor sub-DNNs on the CPU only, not cuda: @sub_1"):
        _emit_cpp(mixed, "cuda")


def test_aoti_build_flags_only_where_used():
    """build.sh, CMakeLists.txt and the g++ commands gain torch's headers, ABI flag and
    libraries for a host with Inductor sub-DNNs; a TVM-only host's are as before."""
    from dycl.host import cpp_build as cb

    includes, libs = cb.tvm_paths()
    torch_flags = cb.torch_paths()
    assert torch_flags.abi == int(torch._C._GLIBCXX_USE_CXX11_ABI)
    for text in (cb._build_script("g++", includes, libs), cb._cmake(includes, libs)):
        assert "TORCH" not in text and "GLIBCXX" not in text and "torch" not in text
    script = cb._build_script("g++", includes, libs, torch_flags)
    assert f'FLAGS="-std=c++17 -O2 -fPIC -D_GLIBCXX_USE_CXX11_ABI={torch_flags.abi}"' in script
    assert '-isystem "$TORCH_INCLUDE" -c "$SRC/host.cpp"' in script
    assert '-L"$TORCH_LIB_DIR" -ltorch -ltorch_cpu -lc10' in script and ':$TORCH_LIB_DIR"' in script
    cmake = cb._cmake(includes, libs, torch_flags)
    assert f"add_compile_definitions(_GLIBCXX_USE_CXX11_ABI={torch_flags.abi})" in cmake
    assert "target_link_libraries(dycl_model PUBLIC torch torch_cpu c10)" in cmake
    compiles, links = cb._commands("g++", Path("/s"), Path("/o"), Path("/d"), includes, libs, torch_flags)
    assert all(torch_flags.define in c for c in compiles)  # one C++ ABI in every object
    assert [torch_flags.include in c for c in compiles] == [True, False, False]
    assert "-ltorch_cpu" in links[0] and any(torch_flags.lib in a for a in links[1])


class Scaled(torch.nn.Module):
    """Host scalars into a sub-DNN (an int and a float), a host loop whose trip count
    is data-dependent, an int output and a transposed (non-contiguous) output."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        n = int(y.abs().argmax())
        for i in range(n % 3):
            y = y * (i + 1) + 0.5 * n
        return y.t(), n


def _scaled_inputs(model) -> dict[str, tuple[torch.Tensor]]:
    """One input per trip count of the loop (n % 3 = 0, 1, 2)."""
    found: dict[str, tuple[torch.Tensor]] = {}
    gen = torch.Generator().manual_seed(3)
    while len(found) < 3:
        x = torch.randn(1, 8, generator=gen)
        with torch.no_grad():
            n = int(model.fc(x).abs().argmax())
        found.setdefault(f"loop{n % 3}", (x,))
    return found


@pytest.mark.slow
def test_inductor_sub_dnns_every_path_in_cpp(tmp_path):
    torch.manual_seed(0)
    model = Scaled().eval()
    out = tmp_path / "scaled"
    cm = dycl.compile(model, [torch.randn(1, 8)], backend="inductor", host="cpp", out_dir=out)
    assert {v["backend"] for v in cm.subgraphs.values()} == {"inductor"}
    source = (out / "host.cpp").read_text()
    assert "#define DYCL_WITH_AOTI 1" in source and "dycl::SubDnn" not in source
    assert (out / "dycl_aoti.h").exists() and "dycl_aoti.h" in cm.manifest["files"]
    assert "-ltorch_cpu" in (out / "build.sh").read_text()
    assert_every_path(model, cm, out, _scaled_inputs(model), tmp_path)


@pytest.mark.slow
def test_tvm_and_inductor_sub_dnns_in_one_cpp_host(branchy, monkeypatch, tmp_path):
    """TVM cannot build branchy's first sub-DNN (forced here, as is ONNX Runtime's
    failure): the chain hands it to Inductor, and the C++ host runs Inductor's sub-DNN
    next to TVM's, tensors crossing between them through DLPack."""
    from dycl.backends.onnxruntime import OnnxRuntimeBackend
    from dycl.backends.tvm import TvmBackend
    from dycl.diagnostics import BackendError

    monkeypatch.setenv("DYCL_CACHE_DIR", str(tmp_path / "cache"))  # no cached TVM build of it
    tvm_build = TvmBackend.build

    def tvm_but_sub_0(self, spec, target, out_dir):
        if spec.name == "sub_0":
            raise BackendError("forced for this test")
        return tvm_build(self, spec, target, out_dir)

    def no_onnxruntime(self, spec, target, out_dir):
        raise BackendError("forced for this test")

    monkeypatch.setattr(TvmBackend, "build", tvm_but_sub_0)
    monkeypatch.setattr(OnnxRuntimeBackend, "build", no_onnxruntime)
    model = branchy.make_model()
    out = tmp_path / "mixed"
    cm = dycl.compile(model, branchy.example_inputs(), host="cpp", out_dir=out)
    assert {k: v["backend"] for k, v in cm.subgraphs.items()} == {"sub_0": "inductor", "sub_1": "tvm",
                                                                   "sub_2": "tvm"}
    source = (out / "host.cpp").read_text()
    assert "dycl::AotiSubDnn sub_0;" in source and "dycl::SubDnn sub_1;" in source
    for path, x in branchy.branch_inputs().items():
        with torch.no_grad():
            expected = model(*x)
        assert_same(expected, leaves(cm(*x)))
        got, done = run_cpp(out, x, tmp_path / path)
        assert done.returncode == 0, done.stderr
        assert_same(expected, got)


class KeepsTheBest(torch.nn.Module):
    """A float('-inf') constant on the host, an int product past 64 bits on large
    inputs, and a non-ASCII assert message."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        best, k = float("-inf"), 0
        for i in range(3):
            s = float(self.fc(x)[0, i])
            if s > best:
                best, k = s, i
        n = int(x.sum() * 1e9)
        assert k < 5, "décalage"
        return x * k, best, n * n > 0


def test_python_ints_past_64_bits_stop_the_cpp_host(tmp_path):
    torch.manual_seed(0)
    model = KeepsTheBest().eval()
    out = tmp_path / "best"
    cm = dycl.compile(model, [torch.randn(1, 4)], host="cpp", out_dir=out)
    small, large = torch.randn(1, 4), torch.full((1, 4), 1e3)
    with torch.no_grad():
        for x in (small, large):  # the Python host: -inf a constant, Python's big ints
            assert_same(model(x), leaves(cm(x)))
        got, done = run_cpp(out, [small], tmp_path / "small")
        assert done.returncode == 0, done.stderr
        assert_same(model(small), got)
    _, done = run_cpp(out, [large], tmp_path / "large")
    assert done.returncode == 1 and "integer overflow in *" in done.stderr  # an error, never a wrapped value
    assert '"d\\303\\251calage"' in (out / "host.cpp").read_text()  # the message as UTF-8


class ComparesPastAFloatsPrecision(torch.nn.Module):
    """A run-time int compared with a run-time float: Python compares exactly
    (2**53 + 1 > 2.0**53, and 2**63 is above every int64)."""

    def forward(self, ids, x):
        n, t = int(ids.sum()), float(x.sum())
        if n > t:
            return x * 2, n <= t, n == t
        return x - 1, n <= t, n == t


def test_ints_compare_with_floats_exactly_in_cpp(tmp_path):
    model = ComparesPastAFloatsPrecision().eval()
    out = tmp_path / "exact"
    cm = dycl.compile(model, [torch.tensor([3, 4]), torch.tensor([1.0], dtype=torch.float64)], host="cpp", out_dir=out)
    cases = [([2 ** 53, 1], 2.0 ** 53), ([2 ** 53, 0], 2.0 ** 53), ([3, 4], 7.5), ([2 ** 62, 2 ** 62 - 1], 2.0 ** 63),
             ([-2 ** 62, -2 ** 62], -2.0 ** 63), ([5, 0], float("nan")), ([5, 0], float("inf"))]
    for i, (ids, t) in enumerate(cases):
        args = [torch.tensor(ids), torch.tensor([t], dtype=torch.float64)]
        with torch.no_grad():
            expected = model(*args)
        assert_same(expected, leaves(cm(*args)))
        got, done = run_cpp(out, args, tmp_path / str(i))
        assert done.returncode == 0, done.stderr
        assert_same(expected, got)


def test_a_host_runs_only_its_own_artifact(branchy_cpp, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(branchy_cpp, other)
    import branchy

    model = branchy.make_model()
    with torch.no_grad():
        model.pre.bias += 1
    dycl.compile(model, branchy.example_inputs(), host="cpp", out_dir=other)
    done = subprocess.run([str(branchy_cpp / "dycl_model"), str(other)], capture_output=True, text=True)
    assert done.returncode != 0 and "is not the file this host was built with" in done.stderr


def test_guards_and_strings_in_cpp():
    from dycl.host.cpp import _string_literal, guard_expr

    assert guard_expr("a[1].shape[0] == a[0].shape[0]") == "((guard_dim(a, 1, 0) == guard_dim(a, 0, 0)))"
    assert guard_expr("2 <= a[0].shape[1] < 9 and not a[0].shape[0] % 2 == 1") == (
        "(((INT64_C(2) <= guard_dim(a, 0, 1)) && (guard_dim(a, 0, 1) < INT64_C(9))) && "
        "(!((mod_i64(guard_dim(a, 0, 0), INT64_C(2)) == INT64_C(1)))))")
    with pytest.raises(PassError, match="cannot check the shape guard"):
        guard_expr("a[0].stride(0) == 1")
    assert _string_literal('say "hi" \\ ü') == '"say \\"hi\\" \\\\ \\303\\274"'


def test_a_difference_beyond_1e5_passes_only_as_rounding():
    """assert_same's float64 judge: further from eager than 1e-5 passes only if no
    further from the float64 answer than twice eager's own distance."""
    exact = [torch.tensor([42.0], dtype=torch.float64)]
    eager = torch.tensor([42.0 + 8e-6])
    assert_same(eager, [np.array([42.0 - 4e-6], dtype=np.float32)], exact=exact)  # 1.2e-5 from eager: rounding
    with pytest.raises(AssertionError):
        assert_same(eager, [np.array([42.0 + 4e-5], dtype=np.float32)], exact=exact)  # wrong
    with pytest.raises(AssertionError):
        assert_same(eager, [np.array([42.0 - 4e-6], dtype=np.float32)], exact=lambda: None)  # no judge
