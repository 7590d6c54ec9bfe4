"""A backend loader whose sub-DNN ends the process on some inputs, as an
AOTInductor kernel's index assert inside OpenMP does (tests/test_build_verification.py)."""

import os


def load(path, target):
    def run(x):
        if int(x.reshape(-1)[0]) == 1:
            os.abort()
        if int(x.reshape(-1)[0]) == 2:
            raise ValueError("two is refused")
        return [x * 2]

    return run
