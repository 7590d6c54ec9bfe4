"""Each supported Python construct, compiled and compared with eager on every path."""

import pytest
import torch

import dycl
from dycl.demo import max_abs_error

from models.constructs import CASES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(CASES))
def test_construct_matches_eager(name):
    cls, inputs = CASES[name]
    torch.manual_seed(0)
    model = cls().eval()
    cm = dycl.compile(model, inputs[0])
    with torch.no_grad():
        for x in inputs:
            expected = model(*x)
            got = cm(*x)
            assert type(got) is type(expected)
            assert max_abs_error(expected, got) <= 1e-5, (name, x)
