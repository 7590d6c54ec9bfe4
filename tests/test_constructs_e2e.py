"""Each supported Python construct, compiled and compared with eager on every path."""

import pytest

from models.constructs import CASES, check_matches_eager

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(CASES))
def test_construct_matches_eager(name):
    check_matches_eager(name, backend="torch")  # frontend semantics; backends: test_examples_e2e
