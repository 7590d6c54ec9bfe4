"""Drawing an HCFG with Graphviz: `dycl hcfg OUT -o hcfg.svg` (or .png, .pdf).

The picture is made by Graphviz's `dot` program (through the `graphviz` Python
package where installed). Without `dot`, the graph is still written as DOT beside
the requested file, and the error says how to install Graphviz.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from dycl.diagnostics import DyclError, UsageError

FORMATS = ("svg", "png", "pdf")
INSTALL_HINT = ("install Graphviz: `apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) "
                "or `conda install graphviz`")


def picture_format(output: str | None) -> str | None:
    """The picture format `output` asks for by its suffix; None for DOT text."""
    if not output or output == "-":
        return None
    suffix = Path(output).suffix.lower().lstrip(".")
    if suffix in ("dot", "gv", ""):
        return None
    if suffix not in FORMATS:
        raise UsageError(f"cannot draw the HCFG as '.{suffix}': give -o a .svg, .png, .pdf or .dot file")
    return suffix


def has_dot() -> bool:
    return shutil.which("dot") is not None


def render(dot_text: str, output: Path, fmt: str) -> None:
    """Write `dot_text` drawn as `fmt` to `output`; without `dot`, write `output.dot` and say so."""
    if not has_dot():
        fallback = output.with_suffix(".dot")
        fallback.write_text(dot_text)
        raise DyclError(f"drawing {output} needs Graphviz's `dot` program, which is not on PATH; wrote the graph "
                        f"as {fallback} instead",
                        note=f"{INSTALL_HINT}; then run `dot -T{fmt} {fallback} -o {output}`")
    try:
        data = _pipe(dot_text, fmt)
    except subprocess.CalledProcessError as e:
        detail = (e.stderr or b"").decode(errors="replace").strip().splitlines()
        raise DyclError(f"Graphviz's dot failed to draw {output}: {detail[-1] if detail else e}") from None
    output.write_bytes(data)


def _pipe(dot_text: str, fmt: str) -> bytes:
    try:
        import graphviz
    except ImportError:  # the package is a convenience: dot itself does the drawing
        return subprocess.run(["dot", f"-T{fmt}"], input=dot_text.encode(), capture_output=True,
                              check=True).stdout
    return graphviz.Source(dot_text).pipe(format=fmt)  # its CalledProcessError is subprocess's
