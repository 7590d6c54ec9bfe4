"""Out-of-tree passes, dialects and backends, found through entry points.

A package installed next to dycl declares them in its pyproject.toml:

    [project.entry-points."dycl.passes"]
    tag-funcs = "my_pkg.passes:TagFuncsPass"    # a ModulePass subclass, or a function returning one
    [project.entry-points."dycl.dialects"]
    mydialect = "my_pkg.dialect:MY_DIALECT"     # a Dialect, or a function returning one
    [project.entry-points."dycl.backends"]
    my_backend = "my_pkg.backend:MyBackend"     # a Backend subclass, or a function returning a Backend

`dycl-opt -p tag-funcs`, `dycl.compile(..., backend="my_backend")` and `dycl compile
--backend my_backend` then use them with no change to dycl. The entry points are listed
on first use (metadata files only); a plugin's own module is imported only when one of
its passes, dialects or backends is used. A plugin may not take a name dycl (or xDSL)
already uses: that is an error naming both, never a silent override.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from dycl.diagnostics import DyclError

PASSES_GROUP = "dycl.passes"
DIALECTS_GROUP = "dycl.dialects"
BACKENDS_GROUP = "dycl.backends"


class PluginError(DyclError):
    """A plugin that cannot be used: a name clash, an import error, a wrong kind of object."""


@dataclass(frozen=True)
class Plugin:
    """One entry point: `name = value` in `group`, declared by distribution `dist`."""

    group: str
    name: str
    value: str  # "module:attribute"
    dist: str

    def describe(self) -> str:
        return f"plugin package '{self.dist}' ({self.name} = {self.value})"

    def load(self) -> Any:
        try:
            return metadata.EntryPoint(self.name, self.value, self.group).load()
        except Exception as e:  # the plugin's own import failed: say whose
            raise PluginError(f"{self.describe()} failed to load: {type(e).__name__}: {e}") from e


_FOUND: dict[str, dict[str, Plugin]] = {}  # group → name → plugin, listed once per process


def discover(group: str) -> dict[str, Plugin]:
    """The plugins of `group` on sys.path, by name; two packages claiming one name is an error."""
    if group not in _FOUND:
        found: dict[str, Plugin] = {}
        for ep in metadata.entry_points(group=group):
            dist = ep.dist.name if ep.dist is not None else "?"
            plugin = Plugin(group, ep.name, ep.value, dist)
            other = found.get(ep.name)
            # The same distribution seen twice on sys.path (e.g. an editable install) is one plugin.
            if other is not None and (other.dist, other.value) != (dist, ep.value):
                raise PluginError(f"{_KIND[group]} '{ep.name}' is registered twice: by {other.describe()} "
                                  f"and by {plugin.describe()}")
            found[ep.name] = plugin
        _FOUND[group] = found
    return _FOUND[group]


def clear_cache() -> None:
    """Forget what was discovered, so packages put on sys.path since are seen."""
    _FOUND.clear()
    importlib.invalidate_caches()  # also clears importlib.metadata's directory cache


def clash(plugin: Plugin, owner: str) -> PluginError:
    """A plugin taking a name that `owner` (e.g. "dycl's built-in pass") already uses."""
    kind = _KIND[plugin.group]
    return PluginError(f"{kind} '{plugin.name}' from {plugin.describe()} clashes with {owner} '{plugin.name}'",
                       note=f"rename the {kind} in the plugin's entry points ({plugin.group})")


_KIND = {PASSES_GROUP: "pass", DIALECTS_GROUP: "dialect", BACKENDS_GROUP: "backend"}
