"""What a fallback region changes that its caller sees, found at compile time.

A region's result can differ from what the code after it was compiled for (its
shape follows data no compile-time stand-in showed). The call can then run again
as eager Python, but only if nothing done before that point is visible: module
attributes the region rebinds or whose lists/dicts it changes are put back (the
host saves them at the call's start); anything else (a tensor updated in place,
an argument written, random numbers drawn, output printed, a global changed) makes
the call one that cannot run again, and the mismatch stays an error.

Two views, both needed: the compile-time runs show what the region did on the
stand-ins (also inside the helpers it calls), and its source shows writes on paths
those runs did not take (`if x.sum() > 0: self.hits += 1`).
"""

from __future__ import annotations

import ast
import inspect
import random
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Methods of Python's containers that change them.
MUTATING = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
                       "add", "discard", "appendleft", "popleft", "extendleft", "sort", "reverse", "rotate"})
# Calls that draw random numbers (a run on stand-ins may not reach them).
_RANDOM = frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
                     "multinomial", "normal", "normal_", "uniform_", "exponential_", "geometric_", "cauchy_",
                     "log_normal_", "random_", "bernoulli_", "dropout", "dropout1d", "dropout2d", "dropout3d",
                     "alpha_dropout", "feature_alpha_dropout", "gumbel_softmax", "rrelu", "random", "choice",
                     "choices", "shuffle", "sample", "uniform", "gauss", "randrange", "getrandbits"})
OTHER = "*"  # in an effects list: something the host cannot put back
DRAWS = "rng"  # in an effects list: it draws from the global random generators (torch's, Python's, numpy's)


@dataclass
class RegionEffects:
    """What the compile-time runs of one region changed: module attributes by
    (module path, name), and why anything else it changed cannot be undone."""

    attributes: set[tuple[str, str]] = field(default_factory=set)
    other: list[str] = field(default_factory=list)
    draws: bool = False  # from the global random generators (their states can be saved and put back)

    def entries(self) -> list[str]:
        """The op attribute's strings: 'path:name' per attribute, DRAWS where it draws
        random numbers, OTHER if anything else."""
        return ([OTHER] if self.other else []) + ([DRAWS] if self.draws else []) + \
            sorted(f"{p}:{n}" for p, n in self.attributes)


def _rng_state() -> tuple[Any, ...]:
    np = sys.modules.get("numpy")
    state = np.random.get_state() if np is not None else None
    return (random.getstate(), None if state is None else (state[0], state[1].tobytes(), *state[2:]))


class _SeededOps(TorchDispatchMode):
    """Notes whether any torch op that draws from a random generator runs (also on
    fake tensors, which leave the generator as it was)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = self.private = False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if torch.Tag.nondeterministic_seeded in func.tags:
            self.seen = True
            self.private |= (kwargs or {}).get("generator") is not None  # (a generator of the model's own)
        return func(*args, **(kwargs or {}))


def watched(fn: Any, params: list[str], effects: RegionEffects, tensors_of: Any) -> Any:
    """`fn`, a region's function, noting in `effects` what one run does to its
    arguments (`tensors_of(value)`: the tensors a value holds) and to the random
    generators."""
    def run(model: Any, *args: Any) -> Any:
        held = [(name, t, t._version) for name, a in zip(params, args) for t in tensors_of([a])]
        before = _rng_state()
        seeded = _SeededOps()
        try:
            with seeded:
                return fn(model, *args)
        finally:
            for name, t, version in held:
                if t._version != version:
                    effects.other.append(f"it writes its argument '{name}' in place")
            if seeded.private:
                effects.other.append("it draws from a random generator of its own")
            elif seeded.seen or _rng_state() != before:
                effects.draws = True
    return run


def region_effects(code: str, model: Any, observed: RegionEffects, user_globals: dict[str, Any] | None = None,
                   ) -> list[str]:
    """The `dycl.region_effects` entries of a region: what its runs changed, and what
    its source, and that of the functions and modules it calls, may write on paths
    they did not take."""
    writes, other, draws = static_writes(code, training=any(m.training for m in model.modules()), model=model,
                                         user_globals=user_globals)
    out = RegionEffects(set(observed.attributes), [*observed.other, *other], observed.draws or draws)
    for path, steps, how in writes:
        found = _undoable(model, path, steps, how)
        if found is None:
            out.other.append(f"it {how}s into '{'.'.join(n for k, n in steps if k == 'attr')}' of a module")
        else:
            out.attributes.add(found)
    return out.entries()


def _undoable(model: Any, path: str, steps: list[tuple[str, str]], how: str) -> tuple[str, str] | None:
    """(module path, name) of the attribute a write changes where saving that
    attribute (and a list's or dict's contents) before the call undoes it."""
    try:
        owner = model.get_submodule(path)
    except AttributeError:
        return None
    i = 0
    while i < len(steps) and steps[i][0] == "attr" and isinstance(getattr(owner, steps[i][1], None), torch.nn.Module):
        owner = getattr(owner, steps[i][1])
        path = f"{path}.{steps[i][1]}".lstrip(".")
        i += 1
    rest = steps[i:]
    if not rest or rest[0][0] != "attr":
        return None
    name = rest[0][1]
    value = getattr(owner, name, None)
    container = isinstance(value, (list, dict, set))
    if len(rest) == 1 and (how in ("store", "delete") or how == "update" and (container or isinstance(
            value, (int, float, complex, str, bytes, tuple, frozenset, type(None))))):
        return path, name
    if container and (len(rest) == 2 and rest[1][0] == "item" and how in ("store", "delete") or
                      len(rest) == 1 and how == "call"):
        return path, name
    return None


Writes = list[tuple[str, list[tuple[str, str]], str]]


def static_writes(code: str, training: bool = True, model: Any = None,
                  user_globals: dict[str, Any] | None = None) -> tuple[Writes, list[str], bool]:
    """From a region's source: its writes into what a module holds, as (the module's
    path, the steps from it: ('attr', name) or ('item', ''), how: store, update,
    delete, call), why any other write it makes is not its own business, and whether
    it may draw from the global random generators; with
    `model` and the region's globals, also those of what it calls (a helper that
    counts `self.n += 1` on a path no compile-time run took). `training`: some module
    is in training mode (`F.dropout(h, training=self.training)` draws)."""
    scanner = _Scanner(training, model)
    fn = ast.parse(code).body[0]
    assert isinstance(fn, ast.FunctionDef)
    scanner.scan(fn, {}, user_globals, region=True)
    return scanner.writes, scanner.other, scanner.draws


_LOGGING = frozenset({"debug", "info", "warning", "error", "exception", "critical", "log", "fatal"})


class _Scanner:
    """Reads functions' sources for writes outside their locals, following the calls it
    can resolve (helpers, methods, submodules) and, for one it cannot (`expert(h)` of a
    loop over a ModuleList), every module of the model's own classes."""

    def __init__(self, training: bool, model: Any) -> None:
        self.training, self.model = training, model
        self.writes: Writes = []
        self.other: list[str] = []
        self.draws = False
        self.seen: set[tuple[int, str | None]] = set()
        self.depth = 0
        self.paths = {id(m): p for p, m in model.named_modules()} if model is not None else {}

    def scan(self, fn: ast.FunctionDef, modules: dict[str, str], fn_globals: dict[str, Any] | None,
             region: bool = False) -> None:
        params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} | \
            {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        outside: set[str] = set()  # names bound to other objects the root holds
        locals_: set[str] = set()
        for node in ast.walk(fn):
            if region and isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                path = _submodule_path(node.value)
                if path is not None:
                    modules[node.targets[0].id] = path
                    continue
                if any(isinstance(n, ast.Name) and n.id == "__dycl_root" for n in ast.walk(node.value)):
                    outside.add(node.targets[0].id)
                    continue
            locals_.update(_stored_names(node))
        locals_ -= params | set(modules) | outside

        def written(target: ast.expr, how: str) -> None:
            chain = _steps(target)
            if chain is None:
                self.other.append(f"it writes into a value it did not make ({how})")
            elif chain[0] in modules:
                self.writes.append((modules[chain[0]], chain[1], how))
            elif chain[0] not in locals_:
                self.other.append(f"it writes into '{chain[0]}' ({how})")

        for node in ast.walk(fn):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                self.other.append(f"it rebinds the global(s) {', '.join(node.names)}")
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                how = "update" if isinstance(node, ast.AugAssign) else "delete" if isinstance(node, ast.Delete) \
                    else "store"
                for t in _flattened(targets):
                    if isinstance(t, (ast.Attribute, ast.Subscript)):
                        written(t, how)
                    elif how == "update" and isinstance(t, ast.Name) and t.id in params and t.id not in modules:
                        self.other.append(f"it updates its argument '{t.id}' (in place where it is a tensor or a list)")
            elif isinstance(node, ast.Call):
                self.call(node, modules, locals_ | params, fn_globals, written)

    def call(self, node: ast.Call, modules: dict[str, str], names: set[str], fn_globals: dict[str, Any] | None,
             written: Any) -> None:
        callee = node.func
        name = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else ""
        if name in _RANDOM and not self._module_call(callee, modules) and not _told_not_to_draw(node, self.training):
            if any(k.arg == "generator" for k in node.keywords) or _is_random_instance_call(callee, fn_globals):
                self.other.append(f"it may draw from a random generator of its own ({name})")
            else:
                self.draws = True
            return
        if name == "print":
            self.other.append("it prints")
            return
        chain = _steps(callee)
        if name in _LOGGING and isinstance(callee, ast.Attribute) and "log" in ast.unparse(callee.value).lower():
            self.other.append("it logs")
            return
        if isinstance(callee, ast.Attribute) and (name in MUTATING or name.endswith("_") and not name.startswith("_")):
            written(callee.value, "call")
            return
        if chain is None or self.model is None or self.depth > 6:
            return
        root, steps = chain
        if any(k != "attr" for k, _ in steps):
            return
        if root in modules:
            obj: Any = self._at(modules[root])
        elif root in names:
            if not steps:  # `expert(h)`, a module or function bound in the code
                self.unresolved()
            return
        elif fn_globals is not None and root in fn_globals:
            obj = fn_globals[root]
        else:
            return
        for _, attr in steps:
            obj = getattr(obj, attr, None)
            if obj is None:
                return
        self.called(obj)

    def _module_call(self, callee: ast.expr, modules: dict[str, str]) -> bool:
        """`self.dropout(h)`: a call of a submodule (what it draws, the runs show: a module
        draws only in training mode, which the compile-time runs share)."""
        chain = _steps(callee)
        if chain is None or chain[0] not in modules or any(k != "attr" for k, _ in chain[1]):
            return False
        obj = self._at(modules[chain[0]]) if self.model is not None else None
        for _, attr in chain[1]:
            obj = getattr(obj, attr, None)
        return isinstance(obj, torch.nn.Module) or self.model is None

    def _at(self, path: str) -> Any:
        try:
            return self.model.get_submodule(path)
        except AttributeError:
            return None

    def called(self, obj: Any) -> None:
        """What calling `obj` may change: a user module's forward, a method (of a module,
        with `self` its path), a user function."""
        if isinstance(obj, torch.nn.Module):
            if _library(type(obj)):
                if self.training and obj.training and "dropout" in type(obj).__name__.lower():
                    self.draws = True
                return
            self.function(type(obj).forward, self.paths.get(id(obj)))
        elif inspect.ismethod(obj) and not isinstance(obj.__self__, type):
            owner = obj.__self__
            if isinstance(owner, torch.nn.Module):
                self.function(obj.__func__, self.paths.get(id(owner)))
            elif not _library(type(owner)):
                self.function(obj.__func__, None)  # (its writes to `self` are no module's: not undoable)
        elif inspect.isfunction(obj) and not _library(obj):
            self.function(obj, None)

    def function(self, fn: Any, path: str | None) -> None:
        key = (id(getattr(fn, "__code__", fn)), path)
        if key in self.seen:
            return
        self.seen.add(key)
        try:
            fdef = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
        except (OSError, TypeError, SyntaxError, IndexError):
            self.other.append(f"it calls {getattr(fn, '__qualname__', fn)!s}, whose source is not at hand")
            return
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        args = fdef.args.posonlyargs + fdef.args.args
        modules = {args[0].arg: path} if args and path is not None else {}
        self.depth += 1
        try:
            self.scan(fdef, modules, getattr(fn, "__globals__", None))  # type: ignore[arg-type]
        finally:
            self.depth -= 1

    def unresolved(self) -> None:
        """A call of a value bound in the code: any submodule of the model's own classes."""
        for path, m in self.model.named_modules():
            if path and not _library(type(m)):
                self.function(type(m).forward, path)


def _is_random_instance_call(callee: ast.expr, fn_globals: dict[str, Any] | None) -> bool:
    """`rng.random()` on a generator object (random.Random, numpy's Generator), not
    the module functions that draw from the global one (`random.random()`)."""
    chain = _steps(callee)
    if chain is None or not chain[1]:
        return False
    root = (fn_globals or {}).get(chain[0])
    return root is None or not inspect.ismodule(root)


def _library(obj: Any) -> bool:
    """torch's, the standard library's or dycl's own (not the model's code)."""
    top = (getattr(obj, "__module__", None) or "").split(".")[0]
    return top in ("torch", "dycl", "numpy", "builtins", "functools", "typing") or top in sys.stdlib_module_names


def _told_not_to_draw(call: ast.Call, training: bool) -> bool:
    """A dropout call given `training=False`, or `training=self.training` where no
    module is in training mode."""
    arg = next((k.value for k in call.keywords if k.arg == "training"), call.args[2] if len(call.args) > 2 else None)
    return isinstance(arg, ast.Constant) and arg.value is False or \
        not training and isinstance(arg, ast.Attribute) and arg.attr == "training"


def _submodule_path(e: ast.expr) -> str | None:
    """The path in `__dycl_root.get_submodule('a.b')` (or '' for `__dycl_root`)."""
    if isinstance(e, ast.Name) and e.id == "__dycl_root":
        return ""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "get_submodule" and \
            isinstance(e.func.value, ast.Name) and e.func.value.id == "__dycl_root" and len(e.args) == 1 and \
            isinstance(e.args[0], ast.Constant) and isinstance(e.args[0].value, str):
        return e.args[0].value
    return None


def _stored_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]  # (a nested function's or lambda's parameters)
    return []


def _flattened(targets: list[ast.expr]) -> list[ast.expr]:
    out: list[ast.expr] = []
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)):
            out += _flattened(list(t.elts))
        elif isinstance(t, ast.Starred):
            out += _flattened([t.value])
        else:
            out.append(t)
    return out


def _steps(e: ast.expr) -> tuple[str, list[tuple[str, str]]] | None:
    """`self.a.b[0]` -> ('self', [('attr', 'a'), ('attr', 'b'), ('item', '')]);
    None where the root is not a name."""
    steps: list[tuple[str, str]] = []
    while True:
        if isinstance(e, ast.Attribute):
            steps.append(("attr", e.attr))
            e = e.value
        elif isinstance(e, ast.Subscript):
            steps.append(("item", ""))
            e = e.value
        elif isinstance(e, ast.Name):
            return e.id, steps[::-1]
        else:
            return None
