"""Random dynamic networks as Python *source code*, for differential testing.

`programs()` is a hypothesis strategy of `Program`s: the source of a module
`Gen(nn.Module)` whose `forward` mixes data-dependent control flow (nested
if/elif/else on tensor predicates, conditional expressions, `and`/`or`/`not`,
early `return` in branches and loops, `break`/`continue` in `for` loops over
`range(k)` and over an `nn.ModuleList`, data-dependent `while` loops bounded by a
counter and a `# dycl: max_iterations` comment, growing a list or a tuple, or an
accumulator that enters as 0, 0.0 or None and leaves as a tensor) with a
small set of tensor ops, plus an inlined helper `self._f(x, i)`. Every tensor is (1, 4) float32; every loop has
a constant trip count; every name is assigned on every path before it is read,
so each program is valid, well-typed Python that always terminates.

`Program.features` names the constructs a program uses, so a test can single out
(or steer clear of) a construct combination.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

# Simplest first everywhere: hypothesis shrinks `sampled_from` towards the front.
CONSTS = ("0.0", "1.0", "-1.0", "0.5", "-0.5", "2.0", "-2.0")
INT_CONSTS = ("0", "1", "-1", "2", "-2")
MUL_CONSTS = ("2.0", "0.5", "-1.0", "1.5", "-0.5")
CMPS = (">", "<", ">=", "<=")
REDUCTIONS = ("sum", "mean", "max", "min")
VARS = ("h", "y", "z")  # tensors
SVARS = ("s", "t")  # host scalars (Python floats and ints)
SCALAR_TYPE = {"s": "float", "t": "int"}  # kept to while BUG 4 is avoided
LOOP_VARS = ("i", "j")
LAYER_VARS = ("layer", "layer2")

# Compiler bugs found by tests/test_generated_programs.py, by number (all fixed:
# 1 aliasing `h += e`, 2 a loop variable bound to different modules after a
# break, 3 host scalars in returned tuples, 4 int/float merged by nested ifs).
# While a bug is open its number goes here and the generator steers clear of it.
KNOWN_BUGS: frozenset[int] = frozenset()

MAX_DEPTH = 3  # nesting of compound statements
MAX_HELPER_DEPTH = 2  # the helper is inlined at every call: keep it small
MAX_LOOPS = 2  # nesting of loops


@dataclass(frozen=True)
class Program:
    source: str
    features: frozenset[str]

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        return "Program(features={}, source=\n{})".format(sorted(self.features), self.source)


@dataclass(frozen=True)
class _Loop:
    var: str
    kind: str  # "range" or "layers"
    breakable: bool = True


@dataclass(frozen=True)
class _Ctx:
    defined: tuple[str, ...]  # tensor names assigned on every path to here
    loops: tuple[_Loop, ...] = ()
    depth: int = 0
    helper: bool = False  # generating the body of self._f(x, i)
    no_layer_loops: bool = False  # inside a nested loop that may break (BUG 2)


# How a block ends: falls through (None), or leaves by "return" / "break" /
# "continue" (the code after it in the same block is never reached).
_Exit = str | None


@dataclass
class _Builder:
    draw: Callable[[Any], Any]
    n_fc: int
    n_layers: int
    has_helper: bool
    ret_style: str
    inplace: frozenset[str]  # the names `+=`/`-=`/`*=` may target (see _aliases)
    avoid: frozenset[int]  # the KNOWN_BUGS to steer clear of
    budget: int
    features: set[str] = field(default_factory=set)
    n_layer_loops: int = 0
    n_while: int = 0
    # A host scalar carried by a data-dependent `while` keeps its Python type (dycl
    # rejects an int that becomes a float across iterations): programs with while
    # loops give `s` only floats and `t` only ints, as for BUG 4.
    whiles: bool = False
    # Python eager runs around the tensor work: print, state on `self` (a counter,
    # a tensor attribute, a buffer updated in place: compiled as module state),
    # try/except with raise, in-place tensor methods, lambdas.
    pyish: bool = False
    # The helper may `raise ExitNow(value, k)`, caught by a try around forward's body.
    exits: bool = False

    @property
    def typed_scalars(self) -> bool:
        return self.whiles or 4 in self.avoid
    leaves_loop: list[bool] = field(default_factory=list)  # per enclosing loop: has a break/continue

    # ------------------------------------------------------------ randomness

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(options))

    def chance(self, percent: int) -> bool:
        # Shrinks to False (0): failing programs lose optional constructs.
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def var(self, ctx: _Ctx) -> str:
        return self.pick([n for n in ctx.defined if n not in SVARS])

    def index_vars(self, ctx: _Ctx) -> list[str]:
        """Python ints in scope: range loop variables, or the helper's `i`."""
        return ["i"] if ctx.helper else [lp.var for lp in ctx.loops if lp.kind == "range"]

    def sexpr(self, ctx: _Ctx, depth: int, want: str | None = None) -> str:
        """A host scalar: a constant, a read of a tensor, a scalar name, arithmetic.

        `want` ("int" or "float") asks for that Python type; None takes either.
        BUG 4 (see the test module): an int on one path and a float on the other,
        merged by an if nested in a run-time if, fails to compile. Unless bug 4
        is not avoided, `s` only ever holds floats and `t` only ints, and every
        scalar expression has one type on all paths.
        """
        if want is None and self.typed_scalars:
            want = self.pick(("float", "int"))
        scalars = [n for n in ctx.defined if n in SVARS and (want is None or SCALAR_TYPE[n] == want)]
        kinds: list[str] = []
        if want != "int":
            kinds += ["float_const", "item", "float_bool"]
        if want != "float":
            kinds += ["int_const", "int_bool", "int"]
            if self.index_vars(ctx):
                kinds.append("index")
        if scalars:
            kinds += ["svar", "svar"]
        if depth > 0:
            kinds += ["arith", "ifexp"]
        kind = self.pick(kinds)
        self.features.add("scalar_" + kind)
        v, red, op, c = self.var(ctx), self.pick(REDUCTIONS), self.pick(CMPS), self.pick(CONSTS)
        match kind:
            case "float_const":
                return self.pick(("0.5", "-1.0", "1.0"))
            case "int_const":
                return self.pick(("1", "2", "0", "-1"))
            case "item":
                return f"torch.tanh({v}.{red}()).item()"
            case "float_bool":
                return f"float({v}.{red}() {op} {c})"
            case "int_bool":
                return f"int({v}.{red}() {op} {c})"
            case "int":
                return f"int({v}.{red}())"
            case "svar":
                return self.pick(scalars)
            case "index":
                return self.pick(self.index_vars(ctx))
            case "arith":
                if want == "int":
                    form = self.pick(("{a} + {b}", "-{a}", "{a} * 2"))
                    a, b = self.sexpr(ctx, depth - 1, "int"), self.sexpr(ctx, depth - 1, "int")
                elif want == "float":
                    form = self.pick(("{a} * 0.5", "{b} + {a}", "{b} - {c}", "-{b}"))
                    a, b = self.sexpr(ctx, depth - 1), self.sexpr(ctx, depth - 1, "float")
                else:
                    form = self.pick(("{a} * 0.5", "{a} + {b}", "{a} - {c}", "-{a}", "{a} * 2"))
                    a, b = self.sexpr(ctx, depth - 1), self.sexpr(ctx, depth - 1)
                return "(" + form.format(a=a, b=b, c=c) + ")"
            case "ifexp":
                return f"({self.sexpr(ctx, depth - 1, want)} if {self.pred(ctx, 0)} else {self.sexpr(ctx, depth - 1, want)})"
        raise AssertionError(kind)

    # ------------------------------------------------------------ expressions

    def expr(self, ctx: _Ctx, depth: int) -> str:
        """A (1, 4) float32 tensor expression over the names defined in ctx."""
        if depth <= 0:
            return self.var(ctx)
        kinds = ["leaf", "fc", "act", "const", "binary", "neg", "ifexp", "scalar", "layer_index"]
        range_vars = [lp.var for lp in ctx.loops if lp.kind == "range"]
        layer_vars = [lp.var for lp in ctx.loops if lp.kind == "layers"]
        if self.has_helper and not ctx.helper:
            kinds.append("helper")
        if layer_vars:
            kinds.append("layer_var")
        if range_vars or ctx.helper:
            kinds.append("index")
        if self.pyish:
            kinds.append("memo")
        kind = self.pick(kinds)
        sub = lambda: self.expr(ctx, depth - 1)  # noqa: E731
        match kind:
            case "leaf":
                return self.var(ctx)
            case "memo":  # module state: this call's write, or an earlier call's
                self.features.add("state_tensor_read")
                return self.pick(("self.memo", "self.acc"))
            case "fc":
                return f"self.fc{self.draw(st.integers(0, self.n_fc - 1))}({sub()})"
            case "act":
                return f"torch.{self.pick(('relu', 'tanh'))}({sub()})"
            case "const":
                form = self.pick(("{e} * {m}", "{e} + {c}", "{e} - {c}", "{c} - {e}"))
                return "(" + form.format(e=sub(), m=self.pick(MUL_CONSTS), c=self.pick(CONSTS)) + ")"
            case "binary":
                # tanh keeps products bounded, so values stay small enough for 1e-5.
                form = self.pick(("{a} + {b}", "{a} - {b}", "torch.tanh({a}) * {b}"))
                return "(" + form.format(a=sub(), b=sub()) + ")"
            case "neg":
                return f"(-{sub()})"
            case "ifexp":
                self.features.add("ifexp")
                return f"({sub()} if {self.pred(ctx, depth - 1)} else {sub()})"
            case "scalar":
                v = self.var(ctx)
                form, feature = self.pick((
                    ("{e} + {v}.sum().item()", "item"),
                    ("{e} * torch.tanh({v}.mean()).item()", "item"),
                    ("{e} + int({v}.max())", "int"),
                    ("{e} + float({v}.mean())", "float"),
                    ("{e} * float({v}.min() > {c})", "float_of_bool"),
                    ("{e} * {s}", "scalar_mul"),
                    ("{e} + {s}", "scalar_add"),
                ))
                self.features.add(feature)
                s = self.sexpr(ctx, 1) if "{s}" in form else ""
                return "(" + form.format(e=sub(), v=v, c=self.pick(CONSTS), s=s) + ")"
            case "layer_index":
                self.features.add("layer_index")
                return f"self.layers[{self.draw(st.integers(0, self.n_layers - 1))}]({sub()})"
            case "helper":
                self.features.add("helper")
                idx = self.pick(tuple(range_vars) + ("0", "1", "2"))
                if idx in range_vars:
                    self.features.add("helper_loop_index")
                return f"self._f({sub()}, {idx})"
            case "layer_var":
                self.features.add("layers_loop_call")
                return f"{self.pick(layer_vars)}({sub()})"
            case "index":
                i = "i" if ctx.helper else self.pick(range_vars)
                self.features.add("index_arith")
                form = self.pick(("{e} * ({i} + 1)", "{e} + {i}", "self.layers[{i} % {n}]({e})"))
                if "layers" in form:
                    self.features.add("layer_index_runtime" if not ctx.helper else "layer_index_helper")
                return "(" + form.format(e=sub(), i=i, n=self.n_layers) + ")"
        raise AssertionError(kind)

    def pred(self, ctx: _Ctx, depth: int) -> str:
        """A run-time predicate: a tensor comparison, a host read, or and/or/not of them."""
        kinds = ["cmp", "item", "int", "two", "compound", "bool", "scalar", "tensor_scalar"]
        if self.pyish and not ctx.helper:
            kinds.append("state")
        if self.index_vars(ctx):
            kinds.append("index")
        if depth > 0:
            kinds += ["not", "and", "or"]
        kind = self.pick(kinds)
        v = self.var(ctx)
        red, op, c = self.pick(REDUCTIONS), self.pick(CMPS), self.pick(CONSTS)
        match kind:
            case "state":  # module state written by forward, read back
                self.features.add("state_pred")
                return f"self.count % {self.pick(('2', '3'))} {self.pick(('==', '!='))} 0"
            case "cmp":
                return f"{v}.{red}() {op} {c}"
            case "item":
                self.features.add("item_pred")
                return f"{v}.{red}().item() {op} {c}"
            case "int":
                self.features.add("int_pred")
                return f"int({v}.{red}()) {op} {self.pick(INT_CONSTS)}"
            case "two":
                return f"{v}.{red}() {op} {self.var(ctx)}.{self.pick(REDUCTIONS)}()"
            case "compound":
                return f"{self.expr(ctx, min(depth, 1))}.{red}() {op} {c}"
            case "bool":
                self.features.add("bool_pred")
                return f"bool({v}.{red}() {op} {c})"
            case "scalar":
                self.features.add("scalar_pred")
                return f"{self.sexpr(ctx, 1)} {op} {c}"
            case "tensor_scalar":
                self.features.add("tensor_scalar_pred")
                return f"{v}.{red}() {op} {self.sexpr(ctx, 0)}"
            case "index":  # a Python int: folded, or a host compare in a rolled loop
                self.features.add("index_pred")
                return f"{self.pick(self.index_vars(ctx))} {self.pick(('==', '>', '<'))} {self.pick(('0', '1', '2'))}"
            case "not":
                self.features.add("not")
                return f"not ({self.pred(ctx, depth - 1)})"
            case "and" | "or":
                self.features.add(kind)
                return f"({self.pred(ctx, depth - 1)} {kind} {self.pred(ctx, depth - 1)})"
        raise AssertionError(kind)

    def ret_value(self, ctx: _Ctx) -> str:
        if ctx.helper:
            return self.expr(ctx, 2)
        style = self.ret_style
        if style == "mixed":
            style = self.pick(("single", "pair"))
        if style == "single":
            return self.expr(ctx, 2)
        if style == "pair":
            return f"{self.expr(ctx, 1)}, {self.expr(ctx, 1)}"
        return f"{self.expr(ctx, 1)}, {self.var(ctx)}.sum().item()"  # "scalar"

    # ------------------------------------------------------------- statements

    def block(self, ctx: _Ctx, ind: str, min_stmts: int = 1) -> tuple[list[str], tuple[str, ...], _Exit]:
        """Statements at indentation `ind`; returns the lines, the names defined
        after them, and how the block ends."""
        lines: list[str] = []
        n = self.draw(st.integers(min_stmts, 3))
        for k in range(n):
            if self.budget <= 0 and k >= min_stmts:
                break
            self.budget -= 1
            more, defined, ex = self.stmt(ctx, ind)
            lines += more
            ctx = _Ctx(defined, ctx.loops, ctx.depth, ctx.helper, ctx.no_layer_loops)
            if ex is not None:
                return lines, ctx.defined, ex
        if ctx.depth > 0:  # inside a branch or loop body: maybe leave early
            exits = [None, "return"]
            if ctx.loops:
                exits += ["break", "continue"] if ctx.loops[-1].breakable else ["continue"]
            ex = self.pick(exits) if self.chance(50) else None
            if ex == "return":
                lines.append(f"{ind}return {self.ret_value(ctx)}")
                self.features.add("early_return_helper" if ctx.helper else "early_return")
                if ctx.loops:
                    self.features.add("return_in_loop")
            elif ex is not None:
                lines.append(f"{ind}{ex}")
                self.features.add(ex)
                self.leaves_loop[-1] = True
            if ex is not None:
                return lines, ctx.defined, ex
        return lines, ctx.defined, None

    def stmt(self, ctx: _Ctx, ind: str) -> tuple[list[str], tuple[str, ...], _Exit]:
        kinds = ["assign", "sassign"]
        if any(n in self.inplace for n in ctx.defined):
            kinds.append("augassign")
        if any(n in SVARS for n in ctx.defined):
            kinds.append("saugassign")
        if self.pyish:
            kinds += ["print", "lambda", "view_update", "memo_write", "buffer_update"] + (
                ["count"] if not ctx.helper else [])
            if any(n in self.inplace for n in ctx.defined):
                kinds += ["inplace_method"] * 3 + ["mask_update"] * 2
            if ctx.depth < MAX_DEPTH and self.budget > 0 and not ctx.helper:
                kinds.append("try")
        kinds += ["closure", "dict_config", "comprehension"]
        if self.exits and ctx.helper:
            kinds += ["raise_exit"] * 5
        if ctx.depth < (MAX_HELPER_DEPTH if ctx.helper else MAX_DEPTH) and self.budget > 0:
            kinds.append("if")
            kinds.append("no_grad")
            if not ctx.helper and len(ctx.loops) < MAX_LOOPS:
                kinds += ["for_range"] if ctx.no_layer_loops else ["for_range", "for_layers"]
                if self.whiles:
                    kinds.append("while")
        kind = self.pick(kinds)
        match kind:
            case "assign":
                target = self.pick(VARS + ("x",))
                value = self.expr(ctx, self.draw(st.integers(0, 3)))
                if target in ctx.defined:
                    self.features.add("reassign")
                aliases = _aliases(value)
                if aliases and (target in self.inplace or aliases & self.inplace) and 1 in self.avoid:
                    # BUG 1 (see the test module): `h += e` is not in-place in the
                    # compiled model, so keep its targets unaliased.
                    value = f"{value}.clone()"
                    self.features.add("clone")
                return [f"{ind}{target} = {value}"], _add(ctx.defined, target), None
            case "augassign":
                target = self.pick([n for n in ctx.defined if n in self.inplace])
                op = self.pick(("+=", "-=", "*="))
                value = self.pick(MUL_CONSTS) if op == "*=" else self.expr(ctx, 1)
                self.features.add("augassign")
                return [f"{ind}{target} {op} {value}"], ctx.defined, None
            case "sassign":
                target = self.pick(SVARS)
                self.features.add("scalar_var")
                want = SCALAR_TYPE[target] if self.typed_scalars else None
                return [f"{ind}{target} = {self.sexpr(ctx, 2, want)}"], _add(ctx.defined, target), None
            case "saugassign":  # rebinding a Python number: no aliasing
                target = self.pick([n for n in ctx.defined if n in SVARS])
                op = self.pick(("+=", "-=", "*="))
                want = SCALAR_TYPE[target] if self.typed_scalars else None
                value = ("2" if want == "int" else "0.5") if op == "*=" else self.sexpr(ctx, 1, want)
                self.features.add("scalar_augassign")
                return [f"{ind}{target} {op} {value}"], ctx.defined, None
            case "print":
                self.features.add("print")
                return [f"{ind}print('p', round(float({self.var(ctx)}.{self.pick(REDUCTIONS)}()), 3))"], ctx.defined, None
            case "count":
                self.features.add("state_write")
                return [f"{ind}self.count += 1"], ctx.defined, None
            case "memo_write":  # a tensor kept on the module (decoder state)
                self.features.add("state_tensor_write")
                return [f"{ind}self.memo = {self.expr(ctx, self.draw(st.integers(0, 2)))}"], ctx.defined, None
            case "buffer_update":  # a registered buffer updated in place (running stats, an EMA)
                self.features.add("buffer_update")
                form = self.pick(("self.acc += {e}", "self.acc.mul_({m}).add_({e})", "self.acc.copy_({e})",
                                  "torch.clamp_(self.acc, -2.0, 2.0)", "a = self.acc\n{ind}a.sub_({e})"))
                text = form.format(e=f"torch.tanh({self.expr(ctx, 1)})", m=self.pick(("0.5", "0.9")), ind=ind)
                if self.chance(30):
                    self.features.add("no_grad")
                    return [f"{ind}with torch.no_grad():", *(f"{ind}    {t.strip()}" for t in text.split("\n"))], \
                        ctx.defined, None
                return [f"{ind}{t.strip() if k else t}" for k, t in enumerate(text.split("\n"))], ctx.defined, None
            case "lambda":
                self.features.add("lambda")
                target = self.pick(VARS)
                return [f"{ind}g = lambda u: u * {self.pick(MUL_CONSTS)}",
                        f"{ind}{target} = g({self.expr(ctx, 1)})"], _add(ctx.defined, target), None
            case "inplace_method":
                self.features.add("inplace_method")
                target = self.pick([n for n in ctx.defined if n in self.inplace])
                return [f"{ind}{target}.{self.pick(('mul_', 'add_', 'sub_'))}({self.pick(MUL_CONSTS)})"], ctx.defined, None
            case "raise_exit":  # an early exit carrying a tensor, caught two calls up in forward
                self.features.add("raise_exit")
                value, k = self.expr(ctx, 1), self.pick(("1", "2", "3"))
                return [f"{ind}if {self.pred(ctx, 1)}:", f"{ind}    raise ExitNow({value}, {k})"], ctx.defined, None
            case "mask_update":  # item assignment through a boolean mask or a slice
                self.features.add("mask_update")
                target = self.pick([n for n in ctx.defined if n in self.inplace])
                lhs = self.pick((f"{target}[{target} > {self.pick(CONSTS)}]", f"{target}[:, 1:3]",
                                 f"{target}[{self.var(ctx)}.abs() < {self.pick(('0.5', '1.0'))}]"))
                rhs = self.pick(("0.0", "-1.5", f"{target}[:, 0:2] * 2" if lhs.endswith("1:3]") else "2.5"))
                return [f"{ind}{lhs} = {rhs}"], ctx.defined, None
            case "try":
                return self.try_stmt(ctx, ind)
            case "view_update":  # a write through a view reaches its base, as in eager
                self.features.add("view_update")
                base = self.var(ctx)
                op = self.pick(("+=", "*=", ".mul_", ".add_"))
                k = self.pick(MUL_CONSTS)
                write = f"{ind}v[0] {op} {k}" if op.startswith(("+", "*")) else f"{ind}v[0]{op}({k})"
                return [f"{ind}v = {base}[0:1]", write], ctx.defined, None
            case "closure":  # a nested function or lambda reading a tensor of the enclosing scope
                self.features.add("closure")
                target, free = self.pick(VARS), self.var(ctx)
                k = self.pick(MUL_CONSTS)
                if self.chance(50):
                    head = [f"{ind}def g(u, k={k}):", f"{ind}    return torch.tanh(u * k + {free})"]
                else:
                    head = [f"{ind}g = lambda u, k={k}: torch.tanh(u * k + {free})  # noqa: E731"]
                return head + [f"{ind}{target} = g({self.expr(ctx, 1)})"], _add(ctx.defined, target), None
            case "dict_config":  # a dict literal of constants and tensors, read by key
                self.features.add("dict")
                target = self.pick(VARS)
                lines = [f"{ind}cfg = {{'scale': {self.pick(MUL_CONSTS)}, 'feat': {self.expr(ctx, 1)}}}"]
                read = self.pick(("cfg['feat'] * cfg['scale']", "cfg.get('bias', 0.5) + cfg['feat']",
                                  "sum(torch.tanh(v) for k, v in cfg.items() if k != 'scale')"))
                return lines + [f"{ind}{target} = {read}"], _add(ctx.defined, target), None
            case "comprehension":  # over a tuple of tensors, or the layers
                self.features.add("comprehension")
                target = self.pick(VARS)
                a, b = self.var(ctx), self.var(ctx)
                value = self.pick((f"sum([torch.tanh(u) * {self.pick(MUL_CONSTS)} for u in ({a}, {b})])",
                                   f"torch.stack([layer({a}) for layer in self.layers]).mean(0)",
                                   f"{a} if any(u.sum() > 0 for u in ({a}, {b})) else {b}"))
                return [f"{ind}{target} = {value}"], _add(ctx.defined, target), None
            case "no_grad":  # a grad-mode block is its body
                self.features.add("no_grad")
                body, defined, ex = self.block(_Ctx(ctx.defined, ctx.loops, ctx.depth + 1, ctx.helper,
                                                    ctx.no_layer_loops), ind + "    ")
                return [f"{ind}with torch.no_grad():"] + body, defined, ex
            case "if":
                return self.if_stmt(ctx, ind)
            case "for_range":
                return self.for_stmt(ctx, ind, "range")
            case "for_layers":
                return self.for_stmt(ctx, ind, "layers")
            case "while":
                return self.while_stmt(ctx, ind)
        raise AssertionError(kind)

    def if_stmt(self, ctx: _Ctx, ind: str) -> tuple[list[str], tuple[str, ...], _Exit]:
        inner = _Ctx(ctx.defined, ctx.loops, ctx.depth + 1, ctx.helper, ctx.no_layer_loops)
        n_elif = self.draw(st.integers(0, 2))
        has_else = self.draw(st.booleans())
        lines: list[str] = []
        outcomes: list[tuple[tuple[str, ...], _Exit]] = []
        for k in range(1 + n_elif + has_else):
            if k == 0:
                lines.append(f"{ind}if {self.pred(inner, 2)}:")
            elif k <= n_elif:
                self.features.add("elif")
                lines.append(f"{ind}elif {self.pred(inner, 2)}:")
            else:
                lines.append(f"{ind}else:")
            body, defined, ex = self.block(inner, ind + "    ")
            lines += body
            outcomes.append((defined, ex))
        if not has_else:
            outcomes.append((ctx.defined, None))
        live = [d for d, ex in outcomes if ex is None]
        if not live:  # every branch leaves: so does the if
            # Only "return" matters above (a loop body that always returns ends
            # the function); any other mix just makes the code after the if dead.
            exits = {ex for _, ex in outcomes}
            return lines, ctx.defined, ("return" if exits == {"return"} else "break")
        defined = tuple(n for n in live[0] if all(n in d for d in live))
        if len(defined) > len(ctx.defined):
            self.features.add("assigned_in_all_branches")
        return lines, defined, None

    def try_stmt(self, ctx: _Ctx, ind: str) -> tuple[list[str], tuple[str, ...], _Exit]:
        """`try` whose body may raise ValueError on a run-time predicate; the handler assigns."""
        self.features.add("try")
        inner = _Ctx(ctx.defined, ctx.loops, ctx.depth + 1, ctx.helper, ctx.no_layer_loops)
        lines = [f"{ind}try:"]
        if self.chance(50):
            self.features.add("raise")
            lines += [f"{ind}    if {self.pred(inner, 1)}:", f"{ind}        raise ValueError('v')"]
        body, defined, ex = self.block(inner, ind + "    ")
        target = self.pick(VARS)
        lines += body + [f"{ind}except ValueError:", f"{ind}    {target} = {self.expr(inner, 1)}"]
        handler = _add(ctx.defined, target)
        if ex is not None:  # the handler falls through: so does the try
            return lines, ctx.defined, None
        return lines, tuple(n for n in defined if n in handler), None

    def for_stmt(self, ctx: _Ctx, ind: str, kind: str) -> tuple[list[str], tuple[str, ...], _Exit]:
        depth = len(ctx.loops)
        if kind == "range":
            var = LOOP_VARS[depth]
            head = f"{ind}for {var} in range({self.draw(st.integers(1, 3))}):"
        else:
            # A fresh name per loop statement (BUG 2 in the test module: a name
            # bound to different submodules on the two sides of a run-time if
            # is rejected, even when it is never read again).
            var = f"layer{self.n_layer_loops}" if 2 in self.avoid else LAYER_VARS[depth]
            self.n_layer_loops += 1
            head = f"{ind}for {var} in self.layers:"
        self.features.add("for_" + kind)
        if depth:
            self.features.add("nested_loops")
        # BUG 2 again: `break` out of a loop that is nested in an if or a loop
        # leaves the ModuleList loop variables bound differently on the two paths.
        # Such a loop may break only if no ModuleList loop is involved.
        breakable = True
        no_layer_loops = ctx.no_layer_loops
        if ctx.depth > 0 and 2 in self.avoid:
            if kind == "layers" or ctx.no_layer_loops:
                breakable = False
            else:
                breakable = self.draw(st.booleans())
                no_layer_loops = breakable
        inner = _Ctx(ctx.defined, ctx.loops + (_Loop(var, kind, breakable),), ctx.depth + 1, ctx.helper,
                     no_layer_loops)
        self.leaves_loop.append(False)
        body, _, ex = self.block(inner, ind + "    ")
        leaves = self.leaves_loop.pop()
        # Names first assigned in the body are not used after the loop; a body
        # that always returns, and never breaks or continues, ends the function
        # (the trip count is at least 1).
        return [head] + body, ctx.defined, ("return" if ex == "return" and not leaves else None)


    def tensor_pred(self, ctx: _Ctx) -> str:
        """A predicate that is never known at compile time (a while condition that is
        would be unrolled, and dycl rejects break/continue there)."""
        v, red, op, c = self.var(ctx), self.pick(REDUCTIONS), self.pick(CMPS), self.pick(CONSTS)
        return self.pick((f"{v}.{red}() {op} {c}", f"{v}.{red}().item() {op} {c}", f"bool({v}.{red}() {op} {c})"))

    def while_stmt(self, ctx: _Ctx, ind: str) -> tuple[list[str], tuple[str, ...], _Exit]:
        """A data-dependent `while`, bounded by a counter (so eager terminates) and a
        `# dycl: max_iterations` comment; the counter steps first, so `continue` is safe."""
        counter = f"k{self.n_while}"
        self.n_while += 1
        trips = self.draw(st.integers(1, 3))
        self.features.add("while")
        if ctx.loops:
            self.features.add("nested_loops")
        inner = _Ctx(ctx.defined, ctx.loops + (_Loop(counter, "while"),), ctx.depth + 1, ctx.helper,
                     ctx.no_layer_loops)
        # The bound comment is optional: without it the host loops as long as eager.
        bound = f"  # dycl: max_iterations={trips}" if self.chance(50) else ""
        if not bound:
            self.features.add("unbounded_while")
        head = [
            f"{ind}{counter} = 0",
            f"{ind}while {counter} < {trips} and {self.tensor_pred(inner)}:{bound}",
            f"{ind}    {counter} += 1",
        ]
        self.leaves_loop.append(False)
        body, _, _ = self.block(inner, ind + "    ")
        self.leaves_loop.pop()
        tail: list[str] = []
        if self.chance(40):
            # A list the loop appends to (a decoder's outputs): its length is the trip count's.
            acc, v = f"acc{counter}", self.var(ctx)
            item = f"{self.var(inner)} * {self.pick(MUL_CONSTS)}"
            if self.chance(50):
                self.features.add("held_list")
                head.insert(0, f"{ind}{acc} = []")
                body = body + [f"{ind}    {acc}.append({item})"]
            else:  # a tuple grown as transformers' generate grows its scores
                self.features.add("held_tuple")
                head.insert(0, f"{ind}{acc} = ()")
                grow = self.pick((f"{acc} += ({item},)", f"{acc} = ({'*'}{acc}, {item})", f"{acc} = {acc} + ({item},)"))
                body = body + [f"{ind}    {grow}"]
            tail = [f"{ind}if {acc}:", f"{ind}    {v} = {v} + torch.stack({acc}).mean(0) * len({acc})"]
            if self.chance(50):
                tail.append(f"{ind}{v} = {v} - {acc}[-1] if len({acc}) > 1 else {v}")
        if self.chance(30):
            # An accumulator that enters as a number or None and leaves as a tensor (ACT's
            # ponder cost, a `prev` state): the loop's first iteration is peeled.
            cost, v = f"cost{counter}", self.var(ctx)
            start = self.pick(("0", "0.0", "None"))
            self.features.add("accumulator_becomes_tensor")
            item = f"{self.var(inner)}.mean() * {self.pick(MUL_CONSTS)}"
            head.insert(0, f"{ind}{cost} = {start}")
            if start == "None":
                body = body + [f"{ind}    {cost} = {item} if {cost} is None else {cost} + {item}"]
                tail = tail + [f"{ind}if {cost} is not None:", f"{ind}    {v} = {v} + {cost}"]
            else:
                body = body + [f"{ind}    {cost} = {cost} + {item}"]
                tail = tail + [f"{ind}{v} = {v} + {cost}"]
        # It may run no iteration: it never ends the function, and names first
        # assigned in its body are not used after it.
        return head + body + tail, ctx.defined, None


def _aliases(expr: str) -> frozenset[str]:
    """The names whose tensor `expr` may evaluate to (the very same object).

    `h += e` is in-place on a tensor: everything aliasing `h` sees the change.
    The generator keeps the names it applies `+=`/`-=`/`*=` to (`inplace`)
    unaliased: never bound to an aliasing expression and never aliased by another
    name; `x` (the caller's tensor in forward and in `_f`) is never one of them.
    """

    def walk(node: ast.expr) -> frozenset[str]:
        match node:
            case ast.Name(id=name):
                return frozenset({name})
            case ast.IfExp(body=body, orelse=orelse):
                return walk(body) | walk(orelse)
            case ast.Call(func=ast.Attribute(value=ast.Name(id="self"), attr="_f"), args=[arg, _]):
                return walk(arg)  # the helper may return its argument
        return frozenset()

    return walk(ast.parse(expr, mode="eval").body)


def _add(names: tuple[str, ...], name: str) -> tuple[str, ...]:
    return names if name in names else names + (name,)


EXIT_CLASS = [
    "class ExitNow(Exception):",
    "    def __init__(self, value, k):",
    "        super().__init__()",
    "        self.value = value",
    "        self.k = k",
    "",
    "",
]


@st.composite
def programs(draw: Callable[[Any], Any], max_stmts: int = 12, avoid: frozenset[int] = KNOWN_BUGS,
             whiles: bool | None = None, pyish: bool = False) -> Program:
    """Random programs, steering clear of the construct combinations of the
    known compiler bugs numbered in `avoid` (see the test module); `whiles`
    allows data-dependent while loops (None: drawn)."""
    n_fc = draw(st.integers(1, 3))
    n_layers = draw(st.integers(1, 3))
    has_helper = draw(st.booleans())
    # BUG 3 (see the test module): a host scalar inside a returned tuple comes
    # back as a 0-d tensor, so "scalar" (return h, v.sum().item()) is held back.
    styles = ("single", "pair", "mixed") + (() if 3 in avoid else ("scalar",))
    ret_style = draw(st.sampled_from(styles))
    inplace = frozenset(draw(st.sets(st.sampled_from(VARS), min_size=1 if pyish else 0)))
    b = _Builder(draw, n_fc, n_layers, has_helper, ret_style, inplace, avoid,
                 budget=draw(st.integers(2, max_stmts)),
                 whiles=draw(st.booleans()) if whiles is None else whiles, pyish=pyish,
                 exits=pyish and has_helper and draw(st.booleans()))
    if ret_style != "single":
        b.features.add("return_" + ret_style)

    helper: list[str] = []
    if has_helper:
        saved, b.budget = b.budget, draw(st.integers(1, 3))
        ctx = _Ctx(("x",), helper=True)
        body, defined, ex = b.block(ctx, " " * 8)
        if ex is None:
            body.append(f"{' ' * 8}return {b.ret_value(_Ctx(defined, helper=True))}")
        helper = ["    def _f(self, x, i):"] + body + [""]
        b.budget = saved

    ctx = _Ctx(("x",))
    body, defined, ex = b.block(ctx, " " * 8, min_stmts=1)
    if ex is None:
        body.append(f"{' ' * 8}return {b.ret_value(_Ctx(defined))}")
    if has_helper and "helper" not in b.features:  # make sure it is called
        b.features.add("helper")
        body.insert(0, f"{' ' * 8}x = self._f(x, {draw(st.integers(0, 2))})")

    if "raise_exit" in b.features:
        # The helper's raise leaves forward's body (from the helper's call) for the handler.
        body = ["        try:", *("    " + line for line in body), "        except ExitNow as e:",
                "            return e.value * e.k"]
    init = [f"        self.fc{k} = nn.Linear(4, 4)" for k in range(n_fc)] + ["        self.count = 0",
                                                                          "        self.memo = torch.zeros(1, 4)",
                                                                          "        self.register_buffer('acc', torch.zeros(1, 4))"]
    init.append(f"        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range({n_layers})])")
    lines = [
        "import torch",
        "from torch import nn",
        "",
        "",
        *(EXIT_CLASS if "raise_exit" in b.features else []),
        "class Gen(nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        *init,
        "",
        *helper,
        "    def forward(self, x):",
        *body,
        "",
    ]
    return Program("\n".join(lines), frozenset(b.features))
