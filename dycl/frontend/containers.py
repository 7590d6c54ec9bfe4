"""Python containers built in forward: comprehensions, dicts, and the builtins
that consume sequences (`sum`, `any`, `all`, `list`, `tuple`, `dict`, `reversed`).

Containers are compile-time structures whose elements may be run-time values:
`[blk(x) for blk in self.blocks]` is a list of three tensors, `{"logits": y}` a
dict with one. Iteration is unrolled, so what is iterated must be known at
compile time (a Python sequence, a module container, `x.shape`, the rows of a
tensor of static first dimension); so must filters and dict keys.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from xdsl.dialects import arith
from xdsl.ir import SSAValue

from dycl.dialects import dycl as d
from dycl.frontend.loops import RuntimeRange, _Injected
from dycl.frontend.objects import READING_METHODS, NotFoldable, from_probe, make_probe, needs_probe
from dycl.frontend.values import MUTATING_METHODS, DictVal, ModuleRef, NamedSeq, ObjectVal, SeqVal, Static, Value

if TYPE_CHECKING:
    from dycl.frontend.lowering import Lowerer, _Scope

_SEQUENCE_BUILTINS = {sum, any, all, list, tuple, dict, reversed, len, collections.OrderedDict, max, min}


class ContainerLowering:
    """Mixin of Lowerer: comprehensions, dicts, list/dict methods and sequence builtins."""

    def _comprehension(self: Lowerer, e: ast.ListComp | ast.GeneratorExp | ast.DictComp, scope: _Scope) -> Value:
        items: list[Value] = []
        out = DictVal()
        single = len(e.generators) == 1 and not isinstance(e, ast.DictComp) and not e.generators[0].is_async
        mark = self._mark()
        if single and self._zipped_parts(e.generators[0].iter, scope) is not None:
            # `[a * b for a, b in zip(x, y)]` over rows known at run time: the loop's own zip
            self._rollback(mark)
            return self._held_comprehension(e, e.generators[0].iter, scope)
        self._rollback(mark)
        # The first iterable is evaluated in the enclosing scope, once, as Python does.
        first = self.expr(e.generators[0].iter, scope)
        if single and (isinstance(first, RuntimeRange) or isinstance(first, SSAValue) and (
                isinstance(first.type, d.ListType) or self.run_time_rows(first))):
            return self._held_comprehension(e, _Injected(first, e.generators[0].iter), scope)

        def run(k: int, sc: _Scope) -> None:
            if k == len(e.generators):
                if isinstance(e, ast.DictComp):
                    key = self.expr(e.key, sc)
                    if not isinstance(key, Static):
                        raise self.unsupported(e.key, "dict comprehension key computed at run time")
                    out.set(key.value, self.expr(e.value, sc))
                else:
                    items.append(self.expr(e.elt, sc))
                return
            g = e.generators[k]
            if g.is_async:
                raise self.unsupported(g.iter, "async comprehension")
            seq = self.iter_items(first if k == 0 else self.expr(g.iter, sc), g.iter)
            if seq is None:
                raise self.unsupported(g.iter, "comprehension over a run-time value (iterate over range(), a module "
                                               "list, a Python sequence or a tensor of static shape)")
            for item in seq:
                self._assign(g.target, item, sc)
                sc.comp_names |= {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)}
                for c in g.ifs:
                    keep = self.truth(c, sc)
                    if not isinstance(keep, Static):
                        raise self.unsupported(c, "comprehension filter on a run-time value")
                    if not keep.value:
                        break
                else:
                    run(k + 1, sc)

        # One scope for the whole comprehension, as in Python: a lambda made in it sees
        # the last binding of its loop variable when called afterwards.
        sub = type(scope)(env=dict(scope.env))
        run(0, sub)
        # Names of the enclosing scope the comprehension rebound (`[y.add_(1) for ...]`
        # updates y; `:=` binds there) keep their new values; its targets do not leak.
        targets = {n.id for g in e.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        for name, v in sub.env.items():
            if name not in targets and scope.env.get(name) is not v:
                scope.env[name] = v
        if isinstance(e, ast.DictComp):
            return out
        if isinstance(e, ast.GeneratorExp) and all(isinstance(x, Static) for x in items):
            return Static(tuple(x.value for x in items))  # type: ignore[union-attr]
        return SeqVal(items, is_list=isinstance(e, ast.ListComp))

    def _held_comprehension(self: Lowerer, e: ast.ListComp | ast.GeneratorExp, it: ast.expr, scope: _Scope) -> Value:
        """`[t.item() for t in tokens]` over a list the host holds, a run-time range or
        the rows of a tensor: the loop `for t in tokens: out.append(t.item())`, whose
        list the host holds, in a scope of its own (the target does not leak, as in Python)."""
        g = e.generators[0]
        name = f"__dycl_comprehension_{e.lineno}_{e.col_offset}"
        append = ast.Expr(ast.Call(func=ast.Attribute(value=ast.Name(name, ast.Load()), attr="append", ctx=ast.Load()),
                                   args=[e.elt], keywords=[]))
        body: list[ast.stmt] = [append]
        for cond in reversed(g.ifs):
            body = [ast.If(test=cond, body=body, orelse=[])]
        loop = ast.For(target=g.target, iter=it, body=body, orelse=[])
        for node in ast.walk(loop):
            if not hasattr(node, "lineno"):
                ast.copy_location(node, e)
        sub = type(scope)(env=dict(scope.env))
        sub.env[name] = SeqVal([], is_list=True)
        self._lower_body([loop], sub)
        return sub.env[name]

    def python_object(self: Lowerer, cls: Any, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> Value | None:
        """`Out(logits, h)` for a namedtuple class, `ModelOutput(logits=y)` for a
        dataclass: a compile-time structure of values, made eager's object on the host
        where it escapes (returned, handed to Python). None for other callables."""
        if not isinstance(cls, type):
            return None
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            names = list(cls._fields)
            defaults = getattr(cls, "_field_defaults", {})
        elif dataclasses.is_dataclass(cls):
            fields = [f for f in dataclasses.fields(cls) if f.init]
            names = [f.name for f in fields]
            defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
            if any(f.default_factory is not dataclasses.MISSING for f in fields):  # type: ignore[misc]
                return None
        else:
            return None
        if len(args) > len(names) or set(kwargs) - set(names):
            raise self.error(node, f"{cls.__name__}() got unexpected arguments")
        bound = dict(zip(names, args)) | kwargs
        missing = [n for n in names if n not in bound and n not in defaults]
        if missing:
            raise self.error(node, f"{cls.__name__}() is missing {', '.join(missing)}")
        values = [bound[n] if n in bound else Static(defaults[n]) for n in names]
        if issubclass(cls, tuple):
            return NamedSeq(values, False, cls)
        if not needs_probe(cls):
            return ObjectVal(values, False, names, "builtins.dict", cls)
        probed = make_probe(cls, names, values)
        if probed is None:
            return None  # built on the host, as the class's code decides
        return ObjectVal(values, False, names, "builtins.dict", cls, *probed)

    def probe_method(self: Lowerer, recv: ObjectVal, name: str, args: list[Value], kwargs: dict[str, Value],
                     node: ast.AST) -> Value:
        """A reading method of an output object (`out.to_tuple()`, `out.keys()`), as its class answers."""
        if name not in READING_METHODS or not all(isinstance(a, Static) for a in (*args, *kwargs.values())):
            raise self.unsupported(node, f"method '{name}' of a {recv.cls.__name__} object")
        return self.probe_answer(recv, lambda o: getattr(o, name)(*[a.value for a in args],
                                                                  **{k: v.value for k, v in kwargs.items()}), node)

    def probe_answer(self: Lowerer, recv: ObjectVal, ask: Any, node: ast.AST) -> Value:
        try:
            with torch.no_grad():
                return from_probe(ask(recv.probe), recv.standins, recv.items)
        except NotFoldable as e:
            raise self.unsupported(node, f"a {recv.cls.__name__} object's answer holding a {e}") from None
        except Exception as e:  # noqa: BLE001 (eager raises it where this line runs: so does Python)
            raise self.unsupported(node, f"{type(e).__name__} from the {recv.cls.__name__} class: {e}") from None

    def _dict_items(self: Lowerer, v: Value, node: ast.AST) -> list[tuple[Any, Value]]:
        if isinstance(v, ObjectVal):
            raise self.unsupported(node, f"** over a {v.cls.__name__} object")
        if isinstance(v, DictVal):
            return list(zip(v.keys, v.items))
        if isinstance(v, Static) and isinstance(v.value, dict):
            return [(k, Static(x)) for k, x in v.value.items()]
        raise self.unsupported(node, "** over a value that is not a dict known at compile time")

    def sequence_builtin(self: Lowerer, obj: Any, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> Value | None:
        """`sum`/`any`/`all`/`list`/`tuple`/`dict`/`reversed`/`len` over a container
        with run-time elements; None when this is not such a call."""
        if obj not in _SEQUENCE_BUILTINS:
            return None
        if obj in (dict, collections.OrderedDict):
            static_dict = bool(args) and isinstance(args[0], Static) and isinstance(args[0].value, dict)
            if args and not isinstance(args[0], (DictVal, SeqVal)) and not static_dict:
                return None
            out = DictVal(factory="builtins.dict" if obj is dict else "collections.OrderedDict")
            if args:
                pairs = self._dict_items(args[0], node) if isinstance(args[0], DictVal) or static_dict else [
                    tuple(self._unpack(p, 2, node)) for p in self.iter_items(args[0], node) or []]
                for k, x in pairs:
                    if not isinstance(k, Static) and isinstance(args[0], SeqVal):
                        raise self.unsupported(node, "dict key computed at run time")
                    out.set(k.value if isinstance(k, Static) else k, x)
            for k, x in kwargs.items():
                out.set(k, x)
            return out
        if obj in (max, min):
            return self._max_min(obj is max, args, kwargs, node)
        module_sequence = len(args) == 1 and isinstance(args[0], ModuleRef) and isinstance(
            args[0].module, (nn.Sequential, nn.ModuleList)) and obj in (reversed, list, tuple, len)
        if not module_sequence and (len(args) != 1 or not isinstance(args[0], (SeqVal, Static)) or (
                isinstance(args[0], Static) and obj is not reversed)):
            if not (len(args) == 2 and obj is sum and isinstance(args[0], SeqVal)):
                return None
        items = self.iter_items(args[0], node)
        if items is None:
            return None
        if obj is len:
            return Static(len(items))
        if obj in (list, tuple):
            return SeqVal(items, is_list=obj is list)
        if obj is reversed:
            return SeqVal(items[::-1])
        if obj is sum:
            acc = args[1] if len(args) > 1 else kwargs.get("start", Static(0))
            for x in items:
                acc = self._binop(ast.Add(), acc, x, node)
            return acc
        # any/all: fold what is known; the rest are host truth values.
        is_any = obj is any
        dynamic: list[SSAValue] = []
        for x in items:
            if isinstance(x, Static):
                if bool(x.value) == is_any:
                    return Static(is_any)
                continue
            dynamic.append(self.to_bool(x, node))
        if not dynamic:
            return Static(not is_any)
        acc = dynamic[0]
        for c in dynamic[1:]:
            acc = self.emit((arith.OrIOp if is_any else arith.AndIOp)(acc, c), node).results[0]
        return acc

    def _max_min(self: Lowerer, is_max: bool, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> Value | None:
        """`max(xs)` / `max(a, b, ...)` as Python computes it: the first item no later
        item beats (`x > best`, a host truth value when the items are tensors)."""
        if kwargs:
            return None
        items = self.iter_items(args[0], node) if len(args) == 1 else list(args)
        if not items or all(isinstance(x, Static) for x in items):
            return None
        best = items[0]
        for x in items[1:]:
            beats = self._compare_values(ast.Gt() if is_max else ast.Lt(), x, best, node)
            if isinstance(beats, Static):
                best = x if beats.value else best
                continue
            outer = type(self._new_scope({}))(env={"$v": best})
            self._branch(self.to_bool(beats, node), [], [], outer, node,
                         then_fn=lambda sub, x=x: sub.env.__setitem__("$v", x), else_fn=lambda sub: None)
            best = outer.env["$v"]
        return best

    def container_method(self: Lowerer, recv: SeqVal, name: str, args: list[Value], kwargs: dict[str, Value],
                         node: ast.AST) -> Value:
        """Methods of a list or dict built in forward, evaluated at compile time."""
        if isinstance(recv, ObjectVal):
            if recv.probe is None:
                raise self.error(node, f"{recv.cls.__name__} object has no attribute '{name}' here")
            return self.probe_method(recv, name, args, kwargs, node)
        if recv.held_by is not None and name in MUTATING_METHODS:
            raise self.unsupported(node, f"'{name}' on {recv.held_by}, a module container")
        if recv.argument is not None and name in MUTATING_METHODS:
            self.note_argument_mutated(recv, node)
        if name in MUTATING_METHODS:
            self.check_not_one_of_several(recv, self._caller_scopes[-1], node)
        if isinstance(recv, DictVal) and name == "update" and not args:
            for k, x in kwargs.items():
                recv.set(k, x)
            return Static(None)
        if not isinstance(recv, DictVal) and recv.is_list and not args and (
                name == "reverse" and not kwargs or name == "sort" and set(kwargs) <= {"reverse"} and all(
                    isinstance(v, Static) for v in (*recv.items, *kwargs.values()))):
            if name == "reverse":
                recv.items.reverse()
            else:  # `idx = list(range(4)); idx.sort(reverse=True)`: numbers known here
                reverse = bool(kwargs["reverse"].value) if "reverse" in kwargs else False  # type: ignore[union-attr]
                try:
                    recv.items[:] = sorted(recv.items, key=lambda x: x.value, reverse=reverse)  # type: ignore[union-attr]
                except TypeError as e:
                    raise self.error(node, f"TypeError: {e}") from None
            return Static(None)
        if kwargs or any(not isinstance(a, Static) for a in args[:1]) and name not in ("append", "extend", "update"):
            raise self.unsupported(node, f"'{name}' with run-time keys on a Python container")
        key = args[0].value if args and isinstance(args[0], Static) else None
        if isinstance(recv, DictVal):
            if name == "get":
                return recv.get(key) if key in recv.keys else (args[1] if len(args) > 1 else Static(None))
            if name == "keys":
                return SeqVal([Static(k) for k in recv.keys])
            if name == "values":
                return SeqVal(list(recv.items))
            if name == "items":
                return SeqVal([SeqVal([Static(k), x]) for k, x in zip(recv.keys, recv.items)])
            if name == "copy":
                return recv.like(list(recv.items))
            if name == "update" and len(args) == 1:
                pairs = self._dict_items(args[0], node) if isinstance(args[0], DictVal) or (
                    isinstance(args[0], Static) and isinstance(args[0].value, dict)) else [
                    tuple(self._unpack(p, 2, node)) for p in self.iter_items(args[0], node) or []]
                for k, x in pairs:
                    if not isinstance(k, Static) and not isinstance(args[0], DictVal) and not isinstance(args[0], Static):
                        raise self.unsupported(node, "dict key computed at run time")
                    recv.set(k.value if isinstance(k, Static) and not isinstance(args[0], (DictVal, Static)) else k, x)
                for k, x in kwargs.items():
                    recv.set(k, x)
                return Static(None)
            if name in ("pop", "setdefault") and args:
                if key in recv.keys:
                    x = recv.get(key)
                    if name == "pop":
                        i = recv.keys.index(key)
                        del recv.keys[i], recv.items[i]
                    return x
                if len(args) < 2 and name == "pop":
                    raise self.error(node, f"KeyError: {key!r} is not in this dict")
                default = args[1] if len(args) > 1 else Static(None)
                if name == "setdefault":
                    recv.set(key, default)
                return default
        elif recv.is_list:
            if name == "append" and len(args) == 1:
                recv.items.append(args[0])
                return Static(None)
            if name == "extend" and len(args) == 1:
                more = self.iter_items(args[0], node)
                if more is None:
                    raise self.unsupported(node, "list.extend with a run-time value")
                recv.items.extend(more)
                return Static(None)
            if name == "pop" and len(args) <= 1:
                try:
                    return recv.items.pop(-1 if key is None else key)
                except IndexError:
                    raise self.error(node, "pop from an empty list or index out of range") from None
            if name == "insert" and len(args) == 2 and isinstance(key, int):
                recv.items.insert(key, args[1])
                return Static(None)
            if name == "copy" and not args:
                return recv.like(list(recv.items))
        raise self.unsupported(node, f"method '{name}' of a Python {'dict' if isinstance(recv, DictVal) else 'list' if recv.is_list else 'tuple'}")

    def assign_item(self: Lowerer, target: ast.Subscript, v: Value, scope: _Scope) -> bool:
        """`d[k] = v` / `xs[i] = v` on a dict or list built in forward; False if the
        base is something else (a tensor: an in-place update)."""
        base = self.expr(target.value, scope)
        if not isinstance(base, SeqVal) or not (isinstance(base, DictVal) or base.is_list):
            return False
        if base.held_by is not None:
            raise self.unsupported(target, f"item assignment into {base.held_by}, a module container")
        if base.argument is not None:
            self.note_argument_mutated(base, target)
        key = self._index(target.slice, scope)
        if not isinstance(key, Static):
            raise self.unsupported(target, "item assignment with a run-time index into a Python container")
        if isinstance(base, DictVal):
            base.set(key.value, v)
            return True
        try:
            if isinstance(key.value, slice):  # `shape[1:] = [1] * (len(shape) - 1)`
                items = self.iter_items(v, target)
                if items is None:
                    raise TypeError("must assign iterable to extended slice" if key.value.step is not None
                                    else "can only assign an iterable")
                base.items[key.value] = items
            else:
                base.items[key.value] = v
        except (IndexError, TypeError, ValueError) as ex:
            raise self.error(target, f"list assignment fails: {ex}") from None
        return True
