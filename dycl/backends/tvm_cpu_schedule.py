"""Default schedules for TVM's CPU kernels, so that an untuned build is not a scalar loop nest.

TVM 0.27's CPU pipeline schedules nothing: a fused Relax kernel (relu with its NaN
check, a residual add, a concat) is one naive loop nest per op, each through an
intermediate buffer, none vectorized. Measured on this CPU, 1 thread: a 1x8x32x32
relu 25-36 us untuned, 5-8 us with `Vectorize`; a pool + concat + add + relu 62 us,
16 us. The rules here keep every output's arithmetic exactly as the untuned build
does it (inlining an elementwise producer and changing loop order never reorders a
reduction's sum), so results are bit-identical, only faster.
"""

from __future__ import annotations

from typing import Any

# Vector widths tried, widest first: a loop is vectorized only by a factor that
# divides its extent, so no tail predicate stops TVM from vectorizing it.
_FACTORS = (64, 32, 16, 8, 4)


def _factor(sch: Any, loop: Any) -> int | None:
    from tvm import tirx

    extent = sch.get(loop).extent
    if not isinstance(extent, tirx.IntImm):
        return None  # a symbolic size: left as a scalar loop
    return next((f for f in _FACTORS if extent.value % f == 0), None)


def _vectorize(sch: Any, loop: Any) -> None:
    factor = _factor(sch, loop)
    if factor is None:
        return
    if sch.get(loop).extent.value == factor:
        sch.vectorize(loop)
    else:
        sch.vectorize(sch.split(loop, factors=[None, factor])[1])


def _along_last_axis(block: Any, axis: int) -> bool:
    """Whether the block's iterator `axis` indexes only the last dimension of every
    buffer it reads or writes, with a constant stride (`j`, `w + kw`, `2 * w + kw`):
    a vector over it is one contiguous or strided load."""
    from tvm import tirx
    from tvm.s_tir.dlight.analysis.common_analysis import collect_vars_used_in_prim_expr

    var = block.iter_vars[axis].var

    def uses(e: Any) -> bool:
        return any(v.same_as(var) for v in collect_vars_used_in_prim_expr(e))

    def strided(e: Any) -> bool:
        if e.same_as(var):
            return True
        if isinstance(e, tirx.Mul):
            return e.a.same_as(var) and isinstance(e.b, tirx.IntImm) or e.b.same_as(var) and isinstance(e.a, tirx.IntImm)
        if isinstance(e, tirx.Add):
            return strided(e.a) and not uses(e.b) or strided(e.b) and not uses(e.a)
        return isinstance(e, tirx.Sub) and strided(e.a) and not uses(e.b)

    for region in [*block.reads, *block.writes]:
        dims = region.region
        if any(uses(r.min) for r in dims[:-1]) or dims and uses(dims[-1].min) and not strided(dims[-1].min):
            return False
    return True


def _injective(block: Any) -> bool:
    """Every iterator data-parallel and no reduction init. (dlight's `is_injective`
    ignores iterators of extent 1: a matmul over k = 1 passed, and TVM inlined an
    epilogue into its init and its update both, giving sigmoid(sigmoid(0) * s + x * w) * s.)"""
    from tvm import tirx

    return block.init is None and all(iv.iter_type == tirx.IterVar.DataPar for iv in block.iter_vars)


def _inline_elementwise(sch: Any, blocks: list[Any]) -> list[Any]:
    """Inline each injective block into its consumers, where they are all injective
    (a padding block stays out of a convolution: inlined, its bounds check in the
    innermost loop made a 3x3 conv 1.6x slower), or else into its injective producer;
    the blocks left."""
    from tvm import s_tir

    def all_injective(rvs: list[Any]) -> bool:
        return bool(rvs) and all(_injective(sch.get(rv)) for rv in rvs)

    changed = True
    while changed:
        changed = False
        for i, block in enumerate(blocks):
            rv = block.block_rv
            if not _injective(sch.get(rv)):
                continue
            for inline, neighbours in ((sch.compute_inline, sch.get_consumers), (sch.reverse_compute_inline, sch.get_producers)):
                if not all_injective(neighbours(rv)):
                    continue
                try:
                    inline(rv)
                except s_tir.ScheduleError:  # (this block cannot be inlined that way)
                    continue
                blocks.pop(i)
                changed = True
                break
            if changed:
                break
    return blocks


def rules() -> list[Any]:
    """dlight rules for an llvm target (a class made on first use: it needs TVM).
    (dlight's own CPU Reduction rule is not among them: on a matmul with its weight
    stored [k, j] it walks the weight by column, 1.3x slower than no schedule.)"""
    return [_vectorize_rule()()]


def _vectorize_rule() -> type:
    from tvm import s_tir, tirx
    from tvm.s_tir.dlight.analysis import normalize_prim_func
    from tvm.s_tir.dlight.cpu.base import CPUScheduleRule

    class Vectorize(CPUScheduleRule):
        """Inline every elementwise producer into its consumer (one pass over memory
        instead of one per op), then vectorize each remaining block's innermost
        spatial axis: an injective block's fused loops; a reduction's last spatial
        loop moved inside its reduction loops (a matmul `x[k] * w[k, j]` becomes a
        vector update of the row `j`, each output still summed over k in order)."""

        def apply(self, func: Any, target: Any, _tunable: bool) -> Any:
            if not isinstance(func, tirx.PrimFunc) or not self.is_target_available(target):
                return None
            try:
                return self._schedule(s_tir.Schedule(func))
            except s_tir.ScheduleError:  # a kernel these rules do not fit: TVM's own loops
                return None

        def _schedule(self, sch: Any) -> Any:
            blocks = normalize_prim_func(sch)
            if blocks is None:
                return None
            for block in _inline_elementwise(sch, blocks):
                loops = sch.get_loops(block.block_rv)
                kinds = block.dom_kind()
                if not loops or len(loops) != len(kinds) or "O" in kinds:
                    continue
                if _injective(sch.get(block.block_rv)):
                    # Fused into one loop where every size is known (a symbolic size would
                    # cost a division per element to recover the indices).
                    static = all(isinstance(sch.get(loop).extent, tirx.IntImm) for loop in loops)
                    _vectorize(sch, sch.fuse(*loops) if static and len(loops) > 1 else loops[-1])
                    continue
                spatial = [loop for loop, kind in zip(loops, kinds) if kind == "S"]
                reduction = [loop for loop, kind in zip(loops, kinds) if kind == "R"]
                if not spatial or not reduction or _factor(sch, spatial[-1]) is None \
                        or not _along_last_axis(sch.get(block.block_rv), kinds.rindex("S")):
                    continue  # (a sum along the last axis, a gather: left scalar)
                sch.reorder(*spatial[:-1], *reduction, spatial[-1])
                _vectorize(sch, spatial[-1])
                sch.decompose_reduction(block.block_rv, reduction[0])
            return sch

    return Vectorize


def decompose_reductions(mod: Any) -> Any:
    """Every reduction's initial value written before its reduction loops. TIR runs a
    block's `init` inside them (`if k == 0`), so a loop of no iteration never wrote
    it: a sum over a dimension that is 0 at run time (`order[:k]` with k = 0) gave
    whatever the output buffer held (a different number each call; `all()` False)."""
    from tvm import s_tir, tirx
    from tvm.s_tir.dlight.analysis.common_analysis import collect_vars_used_in_prim_expr, get_sblockrealize

    for gv, func in list(mod.functions.items()):
        if not isinstance(func, tirx.PrimFunc):
            continue
        sch = s_tir.Schedule(func)
        changed = False
        pending = list(sch.get_child_blocks(sch.get_sblock("root"))) if _has_root(sch) else []
        while pending:
            block = pending.pop()
            pending.extend(sch.get_child_blocks(block))
            stmt = sch.get(block)
            if stmt.init is None:
                continue
            realize = get_sblockrealize(sch, block)
            reduced = [v for iv, value in zip(stmt.iter_vars, realize.iter_values)
                       if iv.iter_type == tirx.IterVar.CommReduce for v in collect_vars_used_in_prim_expr(value)]
            first = next((loop for loop in sch.get_loops(block)
                          if any(sch.get(loop).loop_var.same_as(v) for v in reduced)), None)
            if first is None:
                continue
            try:
                sch.decompose_reduction(block, first)
                changed = True
            except s_tir.ScheduleError:
                continue
        if changed:
            mod[gv] = sch.mod["main"].with_attrs(func.attrs) if func.attrs is not None else sch.mod["main"]
    return mod


def _has_root(sch: Any) -> bool:
    try:
        sch.get_sblock("root")
        return True
    except Exception:  # noqa: BLE001 (a function without a root block: nothing to do)
        return False


def cpu_pipeline(tgt: Any) -> Any:
    """TVM's default CPU pipeline with these schedules applied after fusion."""
    import tvm
    from tvm.relax.backend.cpu_generic import pipeline as cpu
    from tvm.s_tir import dlight as dl

    @tvm.transform.module_pass(opt_level=0)
    def decompose(mod: Any, _ctx: Any) -> Any:
        return decompose_reductions(mod)

    @tvm.transform.module_pass(opt_level=0)
    def run(mod: Any, _ctx: Any) -> Any:
        with tgt:
            passes = (cpu.library_dispatch_passes(tgt) + cpu.legalize_passes(tgt)
                      + [dl.ApplyDefaultSchedule(*rules()), decompose]
                      + cpu.dataflow_lower_passes(tgt) + cpu.finalize_passes(tgt))
            return tvm.transform.Sequential(passes)(mod)

    return run
