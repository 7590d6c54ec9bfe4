"""Unsupported Python is a located diagnostic naming the construct and the function."""

import re
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn

import dycl
from dycl.frontend.lowering import lower_module

CASES = {
    # A try whose body may raise at run time (an index read from data) is not its body.
    "try": ("try:\n    y = x[:, int(x.argmax())]\nexcept IndexError:\n    y = x\nreturn y",
            "try/except whose body may raise at run time"),
    # Context managers other than grad-mode switches, nullcontext and profiler ranges.
    "with": ("with torch.autocast('cpu', enabled=False):\n    y = self.fc(x)\nreturn y", "with statement"),
    "nonlocal": ("def bump():\n    nonlocal x\n    x = x + 1\nbump()\nreturn x",
                 "nested function 'bump' that rebinds an outer name (nonlocal/global)"),
    # (one `for` over a run-time range is a loop whose list the host holds; two are not)
    "listcomp": ("n = int(x.sum() > 0) + 1\nys = [x * k * j for k in range(n) for j in range(n)]\nreturn ys[-1]",
                 "comprehension over a run-time value"),
    "generator": ("return sum(t for t in x if t.sum() > 0)", "comprehension filter on a run-time value"),
    "exec": ("exec('y = 1')\nreturn x", "exec()"),
    "random": ("import random\nreturn x", "import statement"),
    "mutate_param": ("self.fc.weight = None\nreturn x", "assignment to the attribute 'weight' of module 'fc'"),
    "setitem": ("x[0] = 1.0\nreturn x", "in-place update of the input 'x'"),
    "raise": ("raise ValueError('no') from None", "re-raise or raise ... from"),
    "inplace": ("x.add_(1.0)\nreturn x", "in-place update of the input 'x'"),
    "inplace_in_loop": ("for _ in range(2):\n    x.add_(1.0)\nreturn x", "in-place update of the input 'x'"),
    # (it said "together with one that is not a tensor, a list or a range", probe 27b)
    "zip_split_and_floats": ("for c, s in zip(x.split(2, dim=1), [2.0, 3.0]):\n    x = x + c.sum() * s\nreturn x",
                             "zip over a Python sequence of tensors whose length only the run time knows"),
    # (it said "in-place tensor mutation", probe 27a)
    "setitem_path_dict": ("d = {}\nif x.sum() > 0:\n    d['pos'] = x\nd['all'] = x * 2\nreturn d['all'] * len(d)",
                          "item assignment to a dict or list that differs between the paths into this point"),
    "inplace_view": ("y = x[0]\nx += 1.0\nreturn y", "in-place update of 'x', which shares its storage with 'y'"),
    "inplace_path_alias": (
        "if x.sum() > 0:\n    z = x * 2\nelse:\n    z = x\nx *= 3.0\nreturn z",
        "in-place update of 'x', which shares its storage with 'z' (a view, or the same tensor on some paths only)",
    ),
    "path_dependent_module": (
        "if x.sum() > 0:\n    f = self.fc\nelse:\n    f = torch.relu\nreturn f(x)",
        "'f' names different modules depending on a run-time condition",
    ),
    "inplace_alias_in_while": (
        "h = x\nwhile h.sum() > -50.0:  # dycl: max_iterations=3\n    h -= torch.tanh(x) * h + 1.0\nreturn x",
        "in-place update of 'h' in a loop body while 'x' shares its storage at loop entry; write `h = h + ...`",
    ),
    "del": ("ys = [x, x * 2]\ndel ys[0]\nreturn ys[0]", "del statement"),
    "read_after_del": ("y = x * 2\ndel y\nreturn y", "a read of 'y' after 'del y'"),
    "nested_class": ("class C:\n    k = 2\nreturn x * C.k", "nested class definition"),
    "decorated_function": ("@torch.no_grad()\ndef g(u):\n    return u * 2\nreturn g(x)", "decorated nested function"),
    "set_comprehension": ("s = {k for k in range(3)}\nreturn x * len(s)", "set comprehension"),
    "global": ("global COUNTER\nCOUNTER = float(x.sum())\nreturn x * 2", "global statement"),
    "runtime_attribute_name": ("n = int(x.sum())\nreturn getattr(self, f'fc{n}')(x)", "getattr() on a module needs a compile-time"),
}


def make_module(body: str) -> nn.Module:
    src = "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"
    src += "    def forward(self, x):\n" + textwrap.indent(body, " " * 8) + "\n"
    path = TMP / f"m_{abs(hash(body))}.py"
    path.write_text("import torch\nfrom torch import nn\n\n" + src)
    namespace: dict = {}
    code = compile(path.read_text(), str(path), "exec")
    exec(code, namespace)
    # inspect.getsource reads the file through linecache
    return namespace["M"]()


TMP = None


@pytest.fixture(autouse=True)
def _tmp(tmp_path):
    global TMP
    TMP = tmp_path


@pytest.mark.parametrize("name", sorted(CASES))
def test_unsupported_construct_is_located(name):
    body, construct = CASES[name]
    model = make_module(body)
    with pytest.raises(dycl.FrontendError) as info:
        lower_module(model, [torch.randn(1, 4)])
    text = str(info.value)
    assert construct in text
    assert "in function 'M.forward'" in text
    m = re.match(r"(.+\.py):(\d+):(\d+): error: ", text)
    assert m, text
    line = int(m.group(2))
    first_line_of_body = 9  # line of `def forward` + 1 in the generated file
    assert line >= first_line_of_body


def test_compile_raises_frontend_error_not_a_traceback():
    model = make_module(CASES["try"][0])
    with pytest.raises(dycl.FrontendError):
        dycl.compile(model, [torch.randn(1, 4)], fallback="error")


def test_cli_reports_frontend_error_without_traceback(tmp_path):
    src = tmp_path / "bad.py"
    src.write_text(
        "import torch\nfrom torch import nn\n\n"
        "class M(nn.Module):\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cpu', enabled=False):\n"
        "            return x\n\n"
        "def make_model():\n    return M()\n"
    )
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "dycl.cli", "compile", f"{src}:make_model", "--input", "1x4xf32", "-o", str(out),
         "--fallback", "error"],
        capture_output=True, text=True,
    )
    assert r.returncode == 1
    assert f"{src}:6:9: error: unsupported Python construct: with statement (in function 'M.forward')" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()  # no partial output


def test_wrong_number_of_example_inputs():
    model = make_module("return self.fc(x)")
    with pytest.raises(dycl.FrontendError, match="takes 1 inputs but 2 example inputs"):
        lower_module(model, [torch.randn(1, 4), torch.randn(1, 4)])


def test_a_while_local_assigned_again_before_its_next_read_is_fine():
    # Only a read that may see the loop's binding is an error (found by generated programs).
    body = (
        "if x.mean() > 0:\n"
        "    while x.sum() > 0:  # dycl: max_iterations=3\n"
        "        y = x * 2\n"
        "        x = x - 1\n"
        "    return x\n"
        "y = x + 1\n"
        "while x.sum() < 0:  # dycl: max_iterations=2\n"
        "    y = y + x\n"
        "    x = x + 1\n"
        "y = x\n"
        "return y"
    )
    model = make_module(body)
    cm = dycl.compile(model, [torch.randn(1, 4)], backend="torch")
    with torch.no_grad():
        for x in (torch.full((1, 4), 0.6), torch.full((1, 4), -0.6), torch.zeros(1, 4)):
            assert torch.equal(cm(x), model(x))


class BestPairOrNone(nn.Module):
    """`best = None`, set to a tuple in a loop over `range(x.size(0))` (a run-time range
    to the frontend), then unpacked: shape inference indexed the loop's None and raised
    a raw TypeError; now a located diagnostic (and a region by default, where eager's
    TypeError is raised when no row qualifies)."""

    def forward(self, x):
        best = None
        for j in range(x.size(0)):
            if x[j].sum() > 0:
                best = (j, x[j])
        j, y = best
        return y * (j + 1)


def test_a_pass_failing_on_a_value_none_on_some_paths_is_located():
    model, example = BestPairOrNone(), torch.ones(3, 2)
    with pytest.raises(dycl.DyclError) as info:
        dycl.compile(model, [example], backend="torch", fallback="error")
    assert re.match(r".+test_frontend_errors\.py:\d+:\d+: error: cannot index a NoneType value", str(info.value))
    cm = dycl.compile(model, [example], backend="torch")
    for x in (torch.ones(3, 2), torch.tensor([[1.0, 1.0], [-1.0, -1.0], [2.0, 2.0]])):
        assert torch.equal(cm(x), model(x))
    with pytest.raises(TypeError, match="cannot unpack non-iterable NoneType object"):
        cm(-torch.ones(3, 2))
