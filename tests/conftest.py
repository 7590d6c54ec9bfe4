import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
sys.path.insert(0, str(ROOT / "tests"))


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
