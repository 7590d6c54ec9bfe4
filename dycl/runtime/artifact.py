"""What makes an artifact trustworthy to load: `manifest.json` names every file with
its SHA-256 and the versions of the runtimes it was built against; `check` refuses
anything else (a missing, truncated or edited file, an edited manifest, a manifest
that does not parse or lacks keys, an unknown backend, a path outside the artifact, other versions)
with a message naming the file and the problem."""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path, PurePosixPath
from typing import Any

from dycl.diagnostics import DyclError

MANIFEST_VERSION = 3  # 3: the manifest's own digest (manifest_sha256)
MANIFEST = "manifest.json"
REQUIRED = ("version", "model", "target", "inputs", "subgraphs", "files", "versions")
# The packages whose version must match at load time: the host and every artifact
# need torch and dycl; the others only where a sub-DNN uses them.
_PACKAGES = {"dycl": "dycl", "torch": "torch", "tvm": "apache-tvm", "onnxruntime": "onnxruntime"}


def versions() -> dict[str, str]:
    found = {}
    for key, dist in _PACKAGES.items():
        try:
            found[key] = version(dist)
        except PackageNotFoundError:
            pass
    return found


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def seal(out_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """`manifest` with the hash of every file already in `out_dir` and the versions."""
    files = {p.relative_to(out_dir).as_posix(): sha256(p) for p in sorted(out_dir.rglob("*"))
             if p.is_file() and p.name != MANIFEST}
    sealed = {**manifest, "version": MANIFEST_VERSION, "versions": versions(), "files": files}
    return {**sealed, "manifest_sha256": _digest(sealed)}


def _digest(manifest: dict[str, Any]) -> str:
    """The manifest's own content (input shapes, signature, backends), so an edit is
    refused at load rather than failing inside a runtime at the first call."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def check(path: Path) -> dict[str, Any]:
    """The artifact's manifest, after checking the artifact against it."""
    file = path / MANIFEST
    if not file.is_file():
        raise DyclError(f"'{path}' is not a dycl artifact (no {MANIFEST})")
    try:
        manifest = json.loads(file.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise _refuse(path, f"{MANIFEST} does not parse ({e})") from None
    if not isinstance(manifest, dict):
        raise _refuse(path, f"{MANIFEST} is not a JSON object")
    if manifest.get("version") != MANIFEST_VERSION:
        raise _refuse(path, f"{MANIFEST} has format version {manifest.get('version')!r}, this dycl reads "
                            f"{MANIFEST_VERSION}")
    missing = [k for k in REQUIRED if k not in manifest]
    if missing:
        raise _refuse(path, f"{MANIFEST} lacks {', '.join(missing)}")
    files = manifest["files"]
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise _refuse(path, f"{MANIFEST}: 'files' must map file names to SHA-256 digests")
    for name, digest in files.items():
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise _refuse(path, f"{MANIFEST} names '{name}', outside the artifact")
        target = path / rel
        if not target.is_file():
            raise _refuse(path, f"'{name}' is missing")
        if sha256(target) != digest:
            raise _refuse(path, f"'{name}' differs from the file dycl wrote (SHA-256 mismatch: truncated or edited)")
    named = {"host.py", *(s.get("file") for s in manifest["subgraphs"].values() if isinstance(s, dict))}
    whole = manifest.get("whole_program")
    if isinstance(whole, dict) and whole.get("used"):
        named.add(whole.get("file"))
    unlisted = sorted(n for n in named if n not in files)
    if unlisted:
        raise _refuse(path, f"{MANIFEST} does not vouch for {', '.join(map(str, unlisted))}")
    from dycl.runtime.loaders import known_backends

    used = {s.get("backend") for s in manifest["subgraphs"].values()}
    if isinstance(whole, dict) and whole.get("used"):
        used.add("onnxruntime")  # (dycl.whole_program: the whole program in one session)
    known = known_backends()
    unknown = sorted(str(b) for b in used if b not in known)
    if unknown:
        raise _refuse(path, f"sub-DNNs name unknown backends: {', '.join(unknown)}")
    needed = {"dycl", "torch"} | {b for b in used if b in _PACKAGES}
    here = versions()
    built = manifest["versions"] if isinstance(manifest["versions"], dict) else {}
    differ = [f"{k} {built.get(k)} (here {here.get(k)})" for k in sorted(needed) if built.get(k) != here.get(k)]
    if differ:
        raise _refuse(path, "built against other versions: " + ", ".join(differ))
    if manifest.get("manifest_sha256") != _digest(manifest):
        raise _refuse(path, f"{MANIFEST} differs from the one dycl wrote (edited)")
    return manifest


def _refuse(path: Path, problem: str) -> DyclError:
    return DyclError(f"cannot load the compiled model in '{path}': {problem}",
                     note="compile the model again to get a whole artifact for this installation")
