import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
sys.path.insert(0, str(ROOT / "tests"))

# The first compile raises Python's recursion limit for nested IR (dycl/nesting.py);
# do it up front, so it never changes inside a hypothesis test (which warns).
from dycl.nesting import allow_depth  # noqa: E402

allow_depth(64)


@pytest.fixture(scope="session")
def branchy():
    import branchy as mod

    return mod


@pytest.fixture(scope="session")
def branchy_compiled(branchy, tmp_path_factory):
    import dycl

    model = branchy.make_model()
    out = tmp_path_factory.mktemp("branchy")
    return model, dycl.compile(model, branchy.example_inputs(), target="llvm", backend="tvm", out_dir=out)


@pytest.fixture(scope="session", autouse=True)
def _split_programs():
    """Whether `auto` composes a program into one ONNX Runtime session depends on a
    timing; tests see the split program unless they ask (tests/test_whole_program.py)."""
    old = os.environ.get("DYCL_WHOLE_PROGRAM")
    os.environ["DYCL_WHOLE_PROGRAM"] = "never"
    yield
    if old is None:
        os.environ.pop("DYCL_WHOLE_PROGRAM", None)
    else:
        os.environ["DYCL_WHOLE_PROGRAM"] = old


@pytest.fixture(scope="session", autouse=True)
def _hermetic_build_cache(tmp_path_factory):
    """Tests share one build cache of their own, not the user's ~/.cache/dycl."""
    import os

    path = tmp_path_factory.mktemp("dycl-cache")
    old = os.environ.get("DYCL_CACHE_DIR")
    os.environ["DYCL_CACHE_DIR"] = str(path)
    yield
    if old is None:
        os.environ.pop("DYCL_CACHE_DIR", None)
    else:
        os.environ["DYCL_CACHE_DIR"] = old
