"""One CompiledModel called from many threads: every result equals eager, on every
path, on every backend (calls are serialised; see CompiledModel), NaN inputs included."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

import dycl

THREADS, CALLS = 8, 60


def _inputs(early_exit):
    """Inputs reaching every exit of the model, and a NaN and an inf one."""
    model = early_exit.make_model()
    found: dict[str, torch.Tensor] = {}
    g = torch.Generator().manual_seed(0)
    for k in range(2000):
        x = torch.randn(1, 16, generator=g) * (0.1 + 0.01 * k)
        found.setdefault(early_exit._exit_of(model, x), x)
    assert len(found) >= 3, f"only paths {sorted(found)} reached"
    nan = torch.randn(1, 16, generator=g)
    nan[0, 3] = float("nan")
    inf = torch.randn(1, 16, generator=g)
    inf[0, 5] = float("inf")
    return model, [*found.values(), nan, inf]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["tvm", "onnxruntime", "inductor", "torch"])
def test_threads_by_calls_by_paths_equal_eager(backend):
    import early_exit

    model, xs = _inputs(early_exit)
    cm = dycl.compile(model, [xs[0]], backend=backend)
    with torch.no_grad():
        want = [model(x) for x in xs]

    def worker(k):
        wrong = []
        for i in range(CALLS):
            j = (k + i) % len(xs)
            got = cm(xs[j])
            if not torch.allclose(got, want[j], atol=1e-5, equal_nan=True):
                wrong.append((k, i, j))
        return wrong

    with ThreadPoolExecutor(THREADS) as pool:
        wrong = [w for ws in pool.map(worker, range(THREADS)) for w in ws]
    assert not wrong, f"{len(wrong)} of {THREADS * CALLS} calls differ from eager: {wrong[:5]}"


class Counts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.calls


def test_first_calls_from_threads_load_one_program(tmp_path):
    """A loaded artifact loads on first call: threads calling at once each loaded a
    program of their own (state split between copies of the model)."""
    import threading

    dycl.compile(Counts(), (torch.ones(2),), backend="torch", out_dir=tmp_path / "art")
    cm = dycl.load(tmp_path / "art")
    barrier = threading.Barrier(4)

    def work():
        barrier.wait()
        for _ in range(8):
            cm(torch.ones(2))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cm.program.root.calls == 32
