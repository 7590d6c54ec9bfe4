"""Each supported Python construct, compiled and compared with eager on every path."""

import pytest

from models.constructs import CASES, check_matches_eager

pytestmark = pytest.mark.slow


# Updating the caller's input tensor in place runs as Python (the fallback's to get right).
RUN_AS_PYTHON = {"inplace_alias_in_loop"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_construct_matches_eager(name):
    # The rest are compiled, not run as Python: these constructs are the frontend's to translate.
    fallback = "python" if name in RUN_AS_PYTHON else "error"
    check_matches_eager(name, backend="torch", fallback=fallback)  # frontend semantics; backends: test_examples_e2e
