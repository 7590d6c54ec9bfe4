"""Each supported Python construct, compiled and compared with eager on every path."""

import warnings

import pytest
import torch

import dycl
from models.constructs import CASES, check_matches_eager

pytestmark = pytest.mark.slow


# Updating the caller's input tensor in place runs as Python (the fallback's to get right).
RUN_AS_PYTHON = {"inplace_alias_in_loop", "seen_tokens_set", "next_with_default", "local_list_mutations",
                 "helper_fills_callers_dict", "try_index_by_data", "split_by_data_count", "loops_over_tuple_results",
                 "tuple_by_run_time_index", "rows_updated_in_place", "rows_kept_then_updated",
                 "row_loop_name_unbound", "rows_unpacked_into_too_few_names", "large_tensor_held_outside_the_model",
                 "none_in_a_loop_carried_tuple", "try_region_then_compiled", "isinstance_of_host_numbers",
                 "list_picked_at_run_time", "aliased_lists_changed_by_a_region", "named_tuples_in_lists_to_a_region",
                 "in_place_update_from_an_overlapping_view", "try_around_a_tuple_index_from_data",
                 "reshape_by_sizes_from_data", "raise_caught_in_a_helper", "try_around_host_math",
                 "read_after_del_or_except", "walrus_in_a_comprehension", "cache_from_a_classmethod",
                 "nms_after_a_threshold", "set_of_values_then_a_tensor", "features_by_number",
                 "heap_and_bisect_updates", "changes_through_dunder_calls", "shape_list_edited_on_one_path",
                 "loop_sized_by_an_item", "try_in_a_loop_sized_by_an_item",
                 "sparse_tensors_in_forward", "sparse_argument"}


@pytest.mark.parametrize("backend", ["onnxruntime", "tvm"])
@pytest.mark.parametrize("name", ["loops_over_tuple_results", "tuple_by_run_time_index", "module_list_out_of_range",
                                  "rows_updated_in_place", "rows_kept_then_updated", "row_loop_name_unbound",
                                  "roll_by_computed_shift", "enumerate_zip_over_rows",
                                  "tensors_held_outside_the_model", "zips_of_selections",
                                  "expert_loop_in_config_branch", "appends_under_data_dependent_ifs",
                                  "switch_moe_with_capacity", "isinstance_checks", "none_carried_through_while_true",
                                  "none_until_loop_breaks", "none_in_a_helpers_tuple",
                                  "none_in_a_loop_carried_tuple", "early_returns_from_a_row_loop",
                                  "return_from_a_run_time_range", "loop_variable_read_after_the_loop",
                                  "cache_grown_in_a_breaking_loop", "number_whose_type_depends_on_the_path",
                                  "name_bound_only_if_the_while_runs", "reversed_run_time_ranges",
                                  "unused_host_values_that_raise", "name_bound_on_one_path_only",
                                  "list_picked_at_run_time", "ints_beyond_int64", "list_grown_while_iterated",
                                  "aliased_lists_changed_by_a_region", "walrus_test_breaks_a_module_loop",
                                  "named_tuples_in_lists_to_a_region", "crops_by_tolist_coordinates",
                                  "nested_breaks_appending_to_a_list", "autograd_function_and_scripted_helpers",
                                  "remove_self_loops", "shape_lists_edited", "sizes_from_host_ints",
                                  "top_two_gating_without_drops"])
def test_run_time_indices_and_row_loops_on_real_backends(name, backend):
    check_matches_eager(name, backend=backend)


@pytest.mark.parametrize("name", sorted(CASES))
def test_construct_matches_eager(name):
    # The rest are compiled, not run as Python: these constructs are the frontend's to translate.
    fallback = "python" if name in RUN_AS_PYTHON else "error"
    check_matches_eager(name, backend="torch", fallback=fallback)  # frontend semantics; backends: test_examples_e2e


class ReversedLayers(torch.nn.Module):
    """zip(reversed(self.layers), self.heads): "submodule 'layers' cannot be used as a value"."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])
        self.heads = torch.nn.ModuleList([torch.nn.Linear(4, 2) for _ in range(3)])

    def forward(self, x):
        for layer, head in zip(reversed(self.layers), self.heads):
            x = torch.tanh(layer(x))
            if x.sum() > 1:
                return head(x), len(self.layers)
        return x[:, :2], len(list(self.layers))


def test_reversed_and_list_of_a_module_list():
    torch.manual_seed(0)
    model = ReversedLayers().eval()
    cm = dycl.compile(model, [torch.randn(1, 4)], backend="torch", fallback="error")
    for s in (0.1, 3.0, -3.0):
        x = torch.randn(1, 4) * s
        got, want = cm(x), model(x)
        assert torch.allclose(got[0], want[0]) and got[1] == want[1]


class TorchAssertWithoutMessage(torch.nn.Module):
    def forward(self, x):
        torch._assert(x.sum() > 0)  # eager: TypeError, a missing argument
        return x


def test_torch_assert_with_a_missing_argument_raises_eagers_type_error():
    cm = dycl.compile(TorchAssertWithoutMessage(), [torch.ones(2)], backend="torch")
    assert [f["construct"] for f in cm.fallbacks] == ["expression statement"]  # run as Python, as eager runs it
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'message'"):
        cm(torch.ones(2))


def test_a_try_region_hands_on_a_name_both_of_its_paths_bind():
    from models.constructs import TryRegionThenCompiled
    x = torch.tensor([[0.9, 1.0], [2.0, 3.0]])
    cm = dycl.compile(TryRegionThenCompiled(), [x], backend="torch")
    assert [f["construct"] for f in cm.fallbacks] == ["try/except"]  # `row * 2 + 1` after it compiles
    assert torch.equal(cm(x), TryRegionThenCompiled()(x))


def test_a_loop_variable_read_after_a_loop_that_ran_no_iteration_raises_eagers_error():
    from models.constructs import LoopVariableReadAfterTheLoop
    model = LoopVariableReadAfterTheLoop()
    cm = dycl.compile(model, [torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3])], backend="torch")
    empty = torch.zeros(0, dtype=torch.long)
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'i'"):
        model(empty, empty)
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'i'"):
        cm(empty, empty)


class DecoratedForwardWithAListDefault(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x, seen=[]):  # noqa: B006 (the idiom under test)
        seen.append(x.sum().item())
        return x * len(seen)


def test_compiling_leaves_a_decorated_forwards_default_list_as_it_was():
    model = DecoratedForwardWithAListDefault()
    seen = type(model).forward.__wrapped__.__defaults__[0]
    dycl.compile(model, [torch.ones(2)], backend="torch")
    assert seen == []


class _GrowsItsParameterList(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ps = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(3))])

    def forward(self, x):
        if x.sum() > 0:
            self.ps.append(torch.nn.Parameter(x.detach().clone()))
        return x + self.ps[-1]


def test_a_parameter_list_forward_grows_is_changed_as_eager_changes_it():
    eager, model = _GrowsItsParameterList(), _GrowsItsParameterList()
    cm = dycl.compile(model, [torch.ones(3)], backend="torch")
    assert all("'ps'" in f["reason"] for f in cm.fallbacks)
    for x in (torch.ones(3), -torch.ones(3), torch.full((3,), 2.0), -torch.ones(3)):
        assert torch.equal(cm(x), eager(x))
        assert len(model.ps) == len(eager.ps)


class _CountsItsCalls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if torch.isnan(x).any():
            raise ValueError(f"non-finite input at call {self.calls} ({x.sum()})")
        return x * self.calls


def test_an_f_string_over_module_state_is_formatted_as_eager_formats_it():
    eager, model = _CountsItsCalls(), _CountsItsCalls()
    cm = dycl.compile(model, [torch.ones(3)], backend="torch", fallback="error")
    for x in (torch.ones(3), torch.full((3,), float("nan")), -torch.ones(3), torch.full((3,), float("nan"))):
        outcomes = []
        for f in (eager, cm):
            try:
                outcomes.append(f(x))
            except ValueError as e:
                outcomes.append(str(e))
        assert outcomes[0] == outcomes[1] if isinstance(outcomes[0], str) else torch.equal(*outcomes)
    assert model.calls == eager.calls == 4


class _CumsumOfSelected(torch.nn.Module):
    def forward(self, x):
        return x[x > 0].cumsum(0), x.new_ones(int((x < 0).sum())).cumprod(0)


def test_tvm_leaves_a_scan_over_a_size_that_may_be_zero_to_another_backend():
    # TVM's cumsum/cumprod kernels write element 0 even of an empty result: with an
    # empty torch tensor (no storage) the process died on a call eager answers.
    model = _CumsumOfSelected()
    cm = dycl.compile(model, [torch.randn(2, 5)], backend="tvm", fallback="error")
    for x in (torch.randn(2, 5), -torch.ones(2, 5), torch.ones(2, 5)):
        for got, want in zip(cm(x), model(x)):
            assert got.shape == want.shape and torch.allclose(got, want)


def test_tensor_properties_are_read_each_call_without_a_changed_state_warning():
    """A property giving a view of a parameter or buffer is a new tensor on each read:
    folded into a constant, the first call with autograd on warned "changed after the
    compile" and every call ran as eager."""
    cls, inputs = CASES["tensor_properties"]
    torch.manual_seed(0)
    model = cls()
    cm = dycl.compile(model, inputs[0], backend="torch", fallback="error")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in inputs * 2:
            assert torch.equal(cm(*x), model(*x))
    assert [str(w.message) for w in caught] == []
    assert cm.fallbacks == []
