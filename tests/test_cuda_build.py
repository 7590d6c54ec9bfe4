"""The CUDA path without a GPU: TVM emits CUDA C per sub-DNN, nvcc compiles it to
PTX and cubins; with a GPU the artifact runs there (skipped here otherwise)."""

import json
import shutil

import pytest
import torch

import dycl
from dycl.backends.base import SubgraphSpec, Target
from dycl.backends.tvm import build_relax, compile_cuda, cuda_sources
from dycl.demo import max_abs_error
from dycl.diagnostics import BackendError

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (the CUDA toolkit) is not installed"),
]


@pytest.fixture(scope="module")
def cuda_artifact(tmp_path_factory):
    import branchy

    model = branchy.make_model()
    out = tmp_path_factory.mktemp("branchy-cuda")
    cm = dycl.compile(model, branchy.example_inputs(), target="cuda", arch="sm_90", out_dir=out, jobs=2, host="cpp")
    return branchy, model, cm, out


def test_the_cpp_host_builds_for_cuda_and_moves_inputs_once(cuda_artifact):
    """Run on an H100 (docs/gpu.md): every path equal to eager. A host tensor input
    is copied to the GPU once per call, not at every sub-DNN that takes it."""
    _, _, _, out = cuda_artifact
    assert (out / "dycl_model").is_file() and (out / "libdycl_model.so").is_file()
    host = (out / "host.cpp").read_text()
    assert "dycl::SubDnn(dir + \"/sub_0.so\", \"sub_0\", kDLCUDA)" in host
    assert "dycl::to_device(std::get<dycl::Tensor>(inputs[0]), DLDevice{kDLCUDA, 0})" in host


def test_every_sub_dnn_has_cuda_kernels_and_cubins(cuda_artifact):
    _, _, _, out = cuda_artifact
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["target"] == {"kind": "cuda", "arch": "sm_90"}
    assert len(manifest["subgraphs"]) == 3
    for name, sub in manifest["subgraphs"].items():
        assert sub["backend"] == "tvm"
        index = json.loads((out / f"{name}.cuda.json").read_text())
        assert index, f"{name}: no CUDA module"
        for cubin in index.values():
            assert (out / cubin).read_bytes()[:4] == b"\x7fELF"  # nvcc's cubin is an ELF image


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_cuda_source_compiles_to_ptx(arch):
    layer = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
    gm = torch.fx.symbolic_trace(layer)
    spec = SubgraphSpec("sub_0", gm, [torch.randn(1, 16)])
    sources = cuda_sources(build_relax(spec, Target("cuda", arch)))
    assert sources and all("__global__" in s for s in sources)
    for source in sources:
        ptx = compile_cuda(source, arch, "ptx").decode()
        assert f".target {arch}" in ptx
        assert ".entry" in ptx


def test_cuda_builds_capture_their_kernel_launches_in_cuda_graphs():
    # Measured on an H200: 1.1-1.6x faster on every zoo path with such parts (docs/gpu.md).
    conv = [torch.nn.Conv2d(8, 8, 3, padding=1) for _ in range(2)]
    layers = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), conv[0], torch.nn.ReLU(), conv[1])
    spec = SubgraphSpec("sub_0", torch.fx.symbolic_trace(layers.eval()), [torch.randn(1, 3, 16, 16)])
    assert "vm.builtin.cuda_graph.run_or_capture" in build_relax(spec, Target("cuda", "sm_90")).as_text()
    assert "cuda_graph" not in build_relax(spec, Target("llvm")).as_text()


def test_a_build_without_cuda_module_fails_loudly(monkeypatch):
    import dycl.backends.tvm as tvm_backend

    monkeypatch.setattr(tvm_backend, "cuda_sources", lambda ex: [])
    gm = torch.fx.symbolic_trace(torch.nn.Linear(4, 4))
    spec = SubgraphSpec("sub_7", gm, [torch.randn(1, 4)])
    with pytest.raises(BackendError, match="sub-DNN sub_7: the CUDA build produced no CUDA module"):
        tvm_backend.build_relax(spec, Target("cuda", "sm_90"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine (tools/gpu_check.py runs it on one)")
def test_runs_on_the_gpu(cuda_artifact):
    branchy, model, cm, _ = cuda_artifact
    model = model.cuda()
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            xs = [t.cuda() for t in x]
            assert max_abs_error(model(*xs), cm(*xs)) <= 1e-4
