"""The benchmark's results (tools/bench.py) as a markdown report and a bar chart.

Both take the document `python -m tools.bench --json` writes (before JSON's
stringified infinities): `machine`, `settings` and `models`.
"""

from __future__ import annotations

import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from dycl.tools.bench import (HOIST_HEADER, LATENCY_HEADER, NO_HOIST, SUMMARY_HEADER, TRACING_HEADER, geomean,
                              hoist_rows, latency_rows, summary_rows, tracing_rows)


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    def fmt(row: list[str]) -> str:
        return "| " + " | ".join(str(c).strip().replace("|", "\\|") for c in row) + " |"

    return "\n".join([fmt(header), "|" + "---|" * len(header), *map(fmt, rows)])


def impls(doc: dict[str, Any]) -> list[str]:
    backends = doc["settings"]["backends"]
    return [*backends, *([b + NO_HOIST for b in backends] if doc["settings"].get("hoist_ablation") else [])]


def write_markdown(path: Path, doc: dict[str, Any]) -> None:
    m, s, models = doc["machine"], doc["settings"], doc["models"]
    backends = s["backends"]
    summary = summary_rows(models, backends)
    for row, (name, b) in zip(summary, [(n, b) for n in models for b in backends]):
        c = models[name]["compile"][b]
        row.insert(3, f"{c['peak_rss_mb']:.0f}" if c["status"] == "ok" else "-")
    out = [
        "# dycl benchmark",
        "",
        f"- date: {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}",
        f"- machine: {m['platform']}, {m['processor']}, {m['cpus']} CPUs ({m['torch_threads']} torch threads)"
        + (f", {m['gpu']}" if "gpu" in m else ""),
        f"- versions: Python {m['python']}, torch {m['torch']}, onnxruntime {version('onnxruntime')}, "
        f"tvm {version('apache-tvm')}",
        f"- settings: target {s['target']}, median of {s['runs']} calls after {s['warmup']} warmup calls, "
        f"backends {', '.join(backends)}, torch.compile {'on' if s['torch_compile'] else 'off'}",
        "",
        "## Summary (geometric mean over paths)",
        "",
        md_table([*SUMMARY_HEADER[:3], "peak RSS MB", *SUMMARY_HEADER[3:]], summary),
        "",
        "eager/dycl, torch.compile/dycl, oracle/dycl: that latency over dycl's (above 1x: dycl is faster). "
        "peak RSS MB: the process's peak RSS during `dycl.compile`, above its RSS before it.",
    ]
    if rows := tracing_rows(models):
        out += ["", f"## Direct tracing (`torch.jit.trace` on the example inputs, {s['trace_inputs']} random inputs)",
                "", md_table(TRACING_HEADER, rows), "",
                "inconsistent: share of the random inputs on which the traced module's output differs from eager's."]
    if rows := hoist_rows(models, backends):
        out += ["", "## hoist-computation-free (with the pass over without it; below 1x: the pass helps)",
                "", md_table(HOIST_HEADER, rows)]
    rows = [[name, *row] for name, r in models.items() for row in latency_rows(r, impls(doc))]
    out += ["", "## Latency per path", "", md_table(["model", *LATENCY_HEADER], rows), ""]
    path.write_text("\n".join(out))


def speedups(r: dict[str, Any], impl: str) -> float | None:
    """Geometric mean over the paths of eager's latency over `impl`'s."""
    lats = [r["latency_ms"][p] for p in r["paths"]]
    return geomean([lat["eager"] / lat[impl] if lat.get(impl) else None for lat in lats])


def write_chart(path: Path, doc: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display: render to the file only
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    models = doc["models"]
    series: dict[str, list[float | None]] = {
        f"dycl {b}": [speedups(r, b) for r in models.values()] for b in doc["settings"]["backends"]}
    series["torch.compile"] = [speedups(r, "torch.compile") for r in models.values()]
    series["path oracle"] = [speedups(r, "oracle") for r in models.values()]
    series = {k: v for k, v in series.items() if any(v)}
    references = {"torch.compile": ("0.65", ""), "path oracle": ("0.35", "//")}  # grey: not dycl

    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(models) * max(1, len(series)) / 3 + 2), 4.5))
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(models))]
        color, hatch = references.get(label, (f"C{i}", ""))
        # From 1x (eager), so that a slowdown points down.
        bars = ax.bar(xs, [v - 1 if v else float("nan") for v in values], width, bottom=1.0, label=label,
                      color=color, hatch=hatch, edgecolor="white" if hatch else None)
        ax.bar_label(bars, labels=[f"{v:.2f}" if v else "" for v in values], fontsize=7, padding=2)
    ax.axhline(1.0, color="black", linewidth=0.8)  # eager
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.set_xticks(range(len(models)), list(models))
    ax.set_ylabel("speedup over eager (log scale)")
    m = doc["machine"]
    ax.set_title(f"Speedup over PyTorch eager, geometric mean over paths\n"
                 f"{m['cpus']} CPUs, torch {m['torch']}, {doc['settings']['target']}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.margins(y=0.15)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
