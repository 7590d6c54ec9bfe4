"""Choosing the backend per sub-DNN: fixed by name, or the measured fastest."""

import pytest
import torch
from xdsl.dialects import func

import dycl
from dycl.compiler import lower_and_optimize, run_pipeline
from dycl.demo import max_abs_error
from dycl.dialects import dycl as d
from dycl.passes.assign_backends import TIMINGS_ATTR, AssignBackendsPass


def subgraphs(module):
    return [f for f in module.ops if isinstance(f, func.FuncOp) and d.SUBGRAPH_ATTR in f.attributes]


def test_fixed_policy_names_the_backend(branchy):
    module = lower_and_optimize(branchy.make_model(), branchy.example_inputs())
    run_pipeline(module, [AssignBackendsPass(backend="onnxruntime")])
    assert {f.attributes[d.BACKEND_ATTR].data for f in subgraphs(module)} == {"onnxruntime"}


def test_unknown_policy_is_a_diagnostic(branchy):
    module = lower_and_optimize(branchy.make_model(), branchy.example_inputs())
    with pytest.raises(dycl.PassError, match="unknown policy 'quickest'"):
        run_pipeline(module, [AssignBackendsPass(policy="quickest")])


@pytest.mark.slow
def test_fastest_picks_the_minimum_and_stays_correct(branchy):
    model = branchy.make_model()
    module = lower_and_optimize(model, branchy.example_inputs())
    run_pipeline(module, [AssignBackendsPass(policy="fastest", candidates="onnxruntime,torch", runs=10)])
    for f in subgraphs(module):
        timings = {k: v.value.data for k, v in f.attributes[TIMINGS_ATTR].data.items()}
        assert set(timings) == {"onnxruntime", "torch"}
        assert f.attributes[d.BACKEND_ATTR].data == min(timings, key=timings.get)
    cm = dycl.compile(model, branchy.example_inputs(), backend="fastest")
    assert {s["backend"] for s in cm.subgraphs.values()} <= {"tvm", "onnxruntime", "torch"}
    with torch.no_grad():
        for x in branchy.branch_inputs().values():
            assert max_abs_error(model(*x), cm(*x)) <= 1e-5
