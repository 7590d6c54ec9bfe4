"""Symbol lookup in O(1) per call.

xDSL's `SymbolTable.lookup_symbol` scans the whole symbol table on every call,
so verifying or rewriting N calls into a module of N functions is quadratic.
Here each table gets a name → op index, built on a miss and checked on every
hit (the op must still sit in the table under that name), so IR edits between
lookups never yield a stale answer.
"""

from __future__ import annotations

import weakref

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolOpInterface, SymbolTable

_INDEX: weakref.WeakKeyDictionary[Operation, dict[str, Operation]] = weakref.WeakKeyDictionary()


def _sym_name(op: Operation) -> str | None:
    iface = op.get_trait(SymbolOpInterface)
    if iface is None:
        return None
    name = iface.get_sym_attr_name(op)
    return name.data if name is not None else None


def _build(table: Operation) -> dict[str, Operation]:
    index: dict[str, Operation] = {}
    for o in table.regions[0].block.ops:
        if (name := _sym_name(o)) is not None:
            index.setdefault(name, o)  # the first wins, as in xDSL's scan
    _INDEX[table] = index
    return index


def _in_table(table: Operation, name: str) -> Operation | None:
    index = _INDEX.get(table)
    if index is not None:
        o = index.get(name)
        if o is not None and o.parent is table.regions[0].block and _sym_name(o) == name:
            return o
    return _build(table).get(name)


def lookup_symbol(op: Operation, name: str | StringAttr | SymbolRefAttr) -> Operation | None:
    """Same answer as `SymbolTable.lookup_symbol(op, name)`."""
    anchor: Operation | None = op
    while anchor is not None and not anchor.has_trait(SymbolTable):
        anchor = anchor.parent_op()
    if anchor is None:
        raise ValueError(f"Operation {op} has no SymbolTable ancestor")
    if isinstance(name, str | StringAttr):
        name = SymbolRefAttr(name)
    found = _in_table(anchor, name.root_reference.data)
    if found is None or not name.nested_references:
        return found
    nested_root, *nested = name.nested_references.data
    return lookup_symbol(found, SymbolRefAttr(nested_root, nested))
