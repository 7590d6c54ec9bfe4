"""Building sub-DNNs once: in-process dedup of identical sub-DNNs and a disk cache.

A build is keyed by the sub-DNN's IR (its name and source locations left out),
the content of every weight it uses, the class, code and settings of every module
it calls, the backend, the target, the versions of
the tools involved and a digest of dycl's own sources, so neither new weights nor
an edited (same-version) dycl ever reuse a stale entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
from importlib.metadata import version
from pathlib import Path

import torch
from torch import nn
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr

from dycl.backends.base import Backend, SubgraphSpec, Target
from dycl.dialects import dycl as d
from dycl.printing import module_text
from dycl.runtime.artifact import sha256

_VERSIONS = None


def _source_digest() -> str:
    """Digest of every Python source of dycl (package, dialects, passes): an
    editable install keeps its version across edits that change what is built."""
    import dycl
    import dycl.dialects
    import dycl.passes

    h = hashlib.sha256()
    roots = {Path(m.__file__).parent for m in (dycl, dycl.dialects, dycl.passes)}
    for root in sorted(roots):
        for f in sorted(root.rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _versions() -> str:
    global _VERSIONS
    if _VERSIONS is None:
        tools = ",".join(f"{p}={version(p)}" for p in ("dycl", "torch", "apache-tvm", "onnxruntime", "xdsl"))
        _VERSIONS = f"{tools},dycl-src={_source_digest()}"
    return _VERSIONS


def cache_dir() -> Path | None:
    """`$DYCL_CACHE_DIR`, else `$XDG_CACHE_HOME/dycl` (~/.cache/dycl); `DYCL_CACHE_DIR=off`
    disables it. Created readable and writable by the user alone: what it holds is
    loaded and run by later compiles."""
    env = os.environ.get("DYCL_CACHE_DIR")
    if env == "off":
        return None
    root = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dycl"
    if not root.is_dir():
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            pass  # reported where an entry is written; a cache is best effort
    return root


_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def _plain(v: object) -> bool:
    return isinstance(v, _PLAIN) or isinstance(v, (tuple, list)) and all(_plain(x) for x in v)


def _module_digest(m: nn.Module, h: "hashlib._Hash") -> None:
    """What a leaf call runs besides its weights: each (sub)module's class, its code
    where it is not torch's own, its settings (`negative_slope`, `eps`, `stride`,
    `training`) and its hooks. The IR names the module by path only: `self.act` a ReLU
    in one model and a GELU in another are the same `dycl.call_module "act"`."""
    for name, sub in m.named_modules():
        cls = type(sub)
        h.update(f"{name}:{cls.__module__}.{cls.__qualname__}".encode())
        if not cls.__module__.startswith("torch."):
            for k, fn in sorted(vars(cls).items()):
                code = getattr(fn, "__code__", None)
                if code is not None:
                    h.update(k.encode() + code.co_code + repr(code.co_consts).encode())
        for k, v in sorted(vars(sub).items()):
            if k.endswith("_hooks") or k.endswith("_hooks_with_kwargs") or k.endswith("_pre_hooks"):
                if isinstance(v, dict) and v:
                    h.update(f"{k}={[getattr(f, '__qualname__', type(f).__name__) for f in v.values()]}".encode())
            elif not k.startswith("_") and _plain(v):
                h.update(f"{k}={v!r}".encode())
            elif (code := getattr(v, "__code__", None)) is not None:  # `m.forward = f` on the instance
                h.update(f"{k}:".encode() + code.co_code + repr(code.co_consts).encode())


def _weights_digest(fn: func.FuncOp, model: nn.Module, h: "hashlib._Hash") -> None:
    for op in fn.walk():
        tensors: list[torch.Tensor] = []
        if isinstance(op, d.CallModuleOp):
            module = model.get_submodule(op.path.data)
            _module_digest(module, h)
            tensors = list(module.state_dict().values())
        elif isinstance(op, d.ParamOp):
            try:
                tensors = [model.get_parameter(op.path.data)]
            except AttributeError:
                tensors = [model.get_buffer(op.path.data)]
        for t in tensors:
            h.update(str((t.dtype, tuple(t.shape))).encode())
            if t.numel():
                h.update(t.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes())


def structural_key(fn: func.FuncOp, model: nn.Module, backend: str, target: Target) -> str:
    clone = fn.clone()
    clone.sym_name = StringAttr("sub")  # names and SSA name hints do not matter
    for op in clone.walk():
        for v in op.results:
            v.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    a.name_hint = None
    for a in list(clone.attributes):
        if a != d.SUBGRAPH_ATTR:
            del clone.attributes[a]
    h = hashlib.sha256()
    h.update(module_text(clone).encode())
    h.update(json.dumps([backend, target.to_json(), _versions()]).encode())
    _weights_digest(fn, model, h)
    return h.hexdigest()




def _verified(entry: Path) -> str | None:
    """The entry's main file if every file it lists is there with its recorded hash."""
    try:
        done = json.loads((entry / "done").read_text())
        files = done["sha256"]
        file = done["file"]
        if not isinstance(files, dict) or file not in files:
            return None
        for name, digest in files.items():
            if "/" in name or not (entry / name).is_file() or sha256(entry / name) != digest:
                return None
        return file
    except (OSError, ValueError, KeyError, TypeError):
        return None


def replace_file(src: Path, target: Path) -> None:
    """Copy `src` to `target` through a new file renamed over it. Writing into an
    existing `target` changes it under every process mapping of it: a sub-DNN
    library loaded to verify it, then overwritten in place by another build of the
    same name, left glibc a corrupt entry to finalise at exit (SIGSEGV in _dl_fini)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, target)


class BuildCache:
    """Builds each distinct sub-DNN once per compile, and once per machine."""

    def __init__(self) -> None:
        self.built: dict[str, tuple[Path, str]] = {}  # key → (dir, file) built this compile
        self.hits = 0
        self.deduplicated = 0

    def build(self, backend: Backend, spec: SubgraphSpec, fn: func.FuncOp, model: nn.Module,
              target: Target, out_dir: Path) -> str:
        key, file = self.lookup(backend, fn, model, target, out_dir, spec.name)
        if file is None:
            file = backend.build(spec, target, out_dir)
            self.verify(backend.name, spec, out_dir, file, target)
            self.record(key, out_dir, file)
        return file

    @staticmethod
    def verify(backend: str, spec: SubgraphSpec, out_dir: Path, file: str, target: Target) -> None:
        """Only builds that match their torch graph are used and cached (the cache key
        covers dycl's sources, so every hit was checked by this same code)."""
        from dycl.backends.verify_build import BuildMismatch, check_build

        wrong = check_build(backend, spec, out_dir, file, target)
        if wrong is not None:
            raise BuildMismatch(wrong)

    def lookup(self, backend: Backend, fn: func.FuncOp, model: nn.Module, target: Target,
               out_dir: Path, name: str) -> tuple[str, str | None]:
        """The build key, and the artifact file (copied into `out_dir` as `name`)
        when this compile or an earlier one built it already; None: build it."""
        key = structural_key(fn, model, backend.cache_tag(), target)
        return key, self.reuse(key, out_dir, name)

    def has(self, key: str) -> bool:
        """Whether this compile or an earlier one built `key` (nothing is copied)."""
        root = cache_dir()
        return key in self.built or (root is not None and (root / "builds" / key / "done").exists())

    def reuse(self, key: str, out_dir: Path, name: str) -> str | None:
        if key in self.built:
            self.deduplicated += 1
            src_dir, file = self.built[key]
            return self.copy(src_dir, file, out_dir, name)
        root = cache_dir()
        entry = root / "builds" / key if root is not None else None
        if entry is not None and (entry / "done").exists():
            file = _verified(entry)
            if file is None:
                # Torn, truncated or tampered with: never reused; rebuilt and stored anew.
                print(f"dycl: note: discarding a damaged build-cache entry ({entry.name[:16]}...)", file=sys.stderr)
                shutil.rmtree(entry, ignore_errors=True)
                return None
            self.hits += 1
            self.built[key] = (entry, file)
            return self.copy(entry, file, out_dir, name)
        return None

    def record(self, key: str, out_dir: Path, file: str) -> None:
        """`file` in `out_dir` is the build for `key`: reuse it, here and later."""
        self.built[key] = (out_dir, file)
        root = cache_dir()
        if root is not None:
            self._store(out_dir, file, root / "builds" / key)

    @staticmethod
    def _artifact_files(directory: Path, file: str) -> list[Path]:
        """The main file and its companions (`sub_0.so`, `sub_0.0.cubin`, `sub_0.cuda.json`)."""
        stem = file.split(".", 1)[0]
        return [p for p in directory.iterdir() if p.name == file or p.name.startswith(stem + ".")]

    def copy(self, src_dir: Path, file: str, out_dir: Path, name: str) -> str:
        stem = file.split(".", 1)[0]
        for p in self._artifact_files(src_dir, file):
            target = out_dir / (name + p.name[len(stem):])
            if p.resolve() == target.resolve():
                continue
            if p.name.endswith(".cuda.json"):  # an index naming its companion files
                index = json.loads(p.read_text())
                index = {k: name + v[len(stem):] for k, v in index.items()}
                target.write_text(json.dumps(index, indent=2) + "\n")
            else:
                replace_file(p, target)
        return name + file[len(stem):]

    def _store(self, out_dir: Path, file: str, entry: Path) -> None:
        tmp: Path | None = None
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            # A fresh name per writer (threads of one process too): no two share a temporary entry.
            tmp = Path(tempfile.mkdtemp(prefix=entry.name + ".tmp", dir=entry.parent))
            hashes = {}
            for p in self._artifact_files(out_dir, file):
                shutil.copyfile(p, tmp / p.name)
                hashes[p.name] = sha256(tmp / p.name)
            # Written last, naming every file with its hash: an entry is whole or ignored.
            (tmp / "done").write_text(json.dumps({"file": file, "sha256": hashes}) + "\n")
            tmp.rename(entry)
        except OSError:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)  # a cache is best effort; another process may have won
