"""Building the C++ host of an artifact: the generated `host.cpp` plus the fixed
support in `cpp_support/` → `libdycl_model.so` (the C API of dycl_model.h) and the
`dycl_model` command, linked against the TVM runtime of the installed wheel.

The support sources, a `build.sh` (plain g++ commands) and a `CMakeLists.txt` are
copied next to them, so the artifact can be rebuilt without dycl.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from dycl.diagnostics import BackendError

SUPPORT_DIR = Path(__file__).parent / "cpp_support"
SUPPORT_FILES = ("dycl_runtime.h", "dycl_model.h", "dycl_capi.cc", "main.cc")
HOST_FILE = "host.cpp"
LIBRARY = "libdycl_model.so"
EXECUTABLE = "dycl_model"

CXXFLAGS = ["-std=c++17", "-O2", "-fPIC"]
# The library exports only the C API (DYCL_API): two models' hosts in one process
# do not share (or clash on) their C++ symbols.
LIB_CXXFLAGS = ["-fvisibility=hidden", "-fvisibility-inlines-hidden"]


def _package_dir(name: str) -> Path:
    """The directory of an installed package, found without importing it (importing tvm takes ~2 s)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"the C++ host needs the '{name}' package (pip install apache-tvm)")
    return Path(next(iter(spec.submodule_search_locations)))


def tvm_paths() -> tuple[list[str], list[str]]:
    """(include dirs, library dirs) of the installed TVM wheel: tvm_ffi's headers (with
    dlpack), and the directories of libtvm_runtime.so and libtvm_ffi.so."""
    tvm_ffi = _package_dir("tvm_ffi")
    tvm = _package_dir("tvm")
    include = tvm_ffi / "include"
    needed = [include / "tvm" / "ffi" / "function.h", include / "dlpack" / "dlpack.h",
              tvm / "lib" / "libtvm_runtime.so", tvm_ffi / "lib" / "libtvm_ffi.so"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        raise BackendError(f"the installed TVM lacks what the C++ host needs: {', '.join(missing)}")
    return [str(include)], [str(tvm / "lib"), str(tvm_ffi / "lib")]


def _compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise BackendError("the C++ host needs a C++17 compiler: no g++ found (set CXX)")
    return cxx


def _commands(cxx: str, src: Path, obj: Path, out: Path, includes: list[str],
              libs: list[str]) -> tuple[list[list[str]], list[list[str]]]:
    """(compile commands, run at once; link commands, in order), sources in `src`,
    objects in `obj`, products in `out`."""
    inc = [f"-I{src}"] + [f"-I{d}" for d in includes]
    compiles = [
        [cxx, *CXXFLAGS, *LIB_CXXFLAGS, *inc, "-c", str(src / HOST_FILE), "-o", str(obj / "host.o")],
        [cxx, *CXXFLAGS, *LIB_CXXFLAGS, *inc, "-c", str(src / "dycl_capi.cc"), "-o", str(obj / "dycl_capi.o")],
        [cxx, *CXXFLAGS, *inc, "-c", str(src / "main.cc"), "-o", str(obj / "main.o")],
    ]
    lib_dirs = [f"-L{d}" for d in libs]
    rpath = ":".join(libs)
    links = [
        # --no-as-needed: the host reaches libtvm_runtime only through the functions it
        # registers when loaded, so no symbol of it is referenced directly.
        [cxx, "-shared", "-o", str(out / LIBRARY), f"-Wl,-soname,{LIBRARY}", "-Wl,-z,defs", str(obj / "host.o"),
         str(obj / "dycl_capi.o"), *lib_dirs, "-Wl,--no-as-needed", "-ltvm_runtime", "-ltvm_ffi",
         "-Wl,--as-needed", "-ldl", f"-Wl,-rpath,{rpath}"],
        [cxx, "-o", str(out / EXECUTABLE), str(obj / "main.o"), f"-L{out}", "-ldycl_model", *lib_dirs,
         "-ltvm_ffi", f"-Wl,-rpath,$ORIGIN:{rpath}"],
    ]
    return compiles, links


def _first_errors(text: str, limit: int = 12) -> str:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if "error" in line or "undefined reference" in line), 0)
    shown = lines[start:start + limit]
    if len(lines) > start + limit:
        shown.append("...")
    return "\n".join(shown) or "(no output)"


def _run(commands: list[list[str]]) -> None:
    """Runs the commands at once; the first failure becomes a BackendError."""
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for c in commands]
    failures = []
    for cmd, p in zip(commands, procs):
        output, _ = p.communicate()
        if p.returncode != 0:
            failures.append((cmd, output))
    if failures:
        cmd, output = failures[0]
        what = Path(cmd[cmd.index("-c") + 1]).name if "-c" in cmd else f"linking {Path(cmd[cmd.index('-o') + 1]).name}"
        raise BackendError(f"the C++ host failed to build ({what}):\n{_first_errors(output)}")


def _build_script(cxx: str, includes: list[str], libs: list[str]) -> str:
    q = shlex.quote
    return f"""#!/bin/sh
# Rebuilds {LIBRARY} and {EXECUTABLE} from host.cpp and dycl's C++ support (written by dycl).
# TVM_INCLUDE, TVM_LIB_DIR, TVM_FFI_LIB_DIR: the TVM wheel's headers and libraries.
set -e
SRC=$(cd "$(dirname "$0")" && pwd)
CXX=${{CXX:-{q(cxx)}}}
TVM_INCLUDE=${{TVM_INCLUDE:-{q(includes[0])}}}
TVM_LIB_DIR=${{TVM_LIB_DIR:-{q(libs[0])}}}
TVM_FFI_LIB_DIR=${{TVM_FFI_LIB_DIR:-{q(libs[1])}}}
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
FLAGS="{' '.join(CXXFLAGS)}"
LIBFLAGS="{' '.join(LIB_CXXFLAGS)}"

$CXX $FLAGS $LIBFLAGS -I"$SRC" -I"$TVM_INCLUDE" -c "$SRC/{HOST_FILE}" -o "$OBJ/host.o" & P1=$!
$CXX $FLAGS $LIBFLAGS -I"$SRC" -I"$TVM_INCLUDE" -c "$SRC/dycl_capi.cc" -o "$OBJ/dycl_capi.o" & P2=$!
$CXX $FLAGS -I"$SRC" -I"$TVM_INCLUDE" -c "$SRC/main.cc" -o "$OBJ/main.o" & P3=$!
FAILED=
wait $P1 || FAILED=1
wait $P2 || FAILED=1
wait $P3 || FAILED=1
[ -z "$FAILED" ] || exit 1

# --no-as-needed: nothing in the host references libtvm_runtime directly (it registers
# the VM's functions when loaded).
$CXX -shared -o "$SRC/{LIBRARY}" -Wl,-soname,{LIBRARY} -Wl,-z,defs "$OBJ/host.o" "$OBJ/dycl_capi.o" \\
    -L"$TVM_LIB_DIR" -L"$TVM_FFI_LIB_DIR" -Wl,--no-as-needed -ltvm_runtime -ltvm_ffi -Wl,--as-needed -ldl \\
    -Wl,-rpath,"$TVM_LIB_DIR:$TVM_FFI_LIB_DIR"
$CXX -o "$SRC/{EXECUTABLE}" "$OBJ/main.o" -L"$SRC" -ldycl_model -L"$TVM_FFI_LIB_DIR" -ltvm_ffi \\
    -Wl,-rpath,'$ORIGIN':"$TVM_LIB_DIR:$TVM_FFI_LIB_DIR"
"""


def _cmake(includes: list[str], libs: list[str]) -> str:
    lib_list = ";".join(libs)
    return f"""# Rebuilds {LIBRARY} and {EXECUTABLE} (written by dycl); the TVM wheel's paths are cache variables.
cmake_minimum_required(VERSION 3.13)
project(dycl_model CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
set(TVM_INCLUDE "{includes[0]}" CACHE PATH "tvm_ffi's include directory")
set(TVM_LIBS "{lib_list}" CACHE STRING "directories of libtvm_runtime.so and libtvm_ffi.so")

add_library(dycl_model SHARED host.cpp dycl_capi.cc)
target_include_directories(dycl_model PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}} ${{TVM_INCLUDE}})
target_link_directories(dycl_model PUBLIC ${{TVM_LIBS}})
target_link_libraries(dycl_model PUBLIC -Wl,--no-as-needed tvm_runtime tvm_ffi -Wl,--as-needed ${{CMAKE_DL_LIBS}})
target_link_options(dycl_model PRIVATE -Wl,-z,defs)
set_target_properties(dycl_model PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                      BUILD_RPATH "${{TVM_LIBS}}" INSTALL_RPATH "${{TVM_LIBS}}")

add_executable(dycl_model_cli main.cc)
set_target_properties(dycl_model_cli PROPERTIES OUTPUT_NAME dycl_model
                      BUILD_RPATH "$ORIGIN;${{TVM_LIBS}}" INSTALL_RPATH "$ORIGIN;${{TVM_LIBS}}")
target_link_libraries(dycl_model_cli PRIVATE dycl_model)
"""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _object_cache(cxx: str, includes: list[str], libs: list[str]) -> Path | None:
    """Where dycl_capi.o and main.o are kept between builds: they do not depend on
    host.cpp, only on the support sources, the compiler and the TVM headers. Under
    the build cache's root (`$DYCL_CACHE_DIR`, else ~/.cache/dycl; `off` disables it,
    as dycl.build_cache.cache_dir, which is not imported here: it imports torch)."""
    env = os.environ.get("DYCL_CACHE_DIR")
    if env == "off":
        return None
    root = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dycl"
    h = hashlib.sha256()
    for name in SUPPORT_FILES:
        h.update(name.encode() + b"\0" + (SUPPORT_DIR / name).read_bytes())
    compiler = Path(shutil.which(cxx) or cxx)
    for p in (compiler, Path(includes[0]) / "tvm" / "ffi" / "c_api.h", Path(libs[-1]) / "libtvm_ffi.so"):
        st = p.stat() if p.exists() else None
        h.update(f"{p}:{st and st.st_size}:{st and st.st_mtime_ns}\0".encode())
    h.update(" ".join(CXXFLAGS + LIB_CXXFLAGS + includes).encode())
    return root / "cpp" / h.hexdigest()[:32]


def build_cpp_host(out_dir: Path, host_cpp: Path) -> dict[str, str]:
    """Builds the C++ host in `out_dir` (the artifact directory): copies `host_cpp`
    (as host.cpp) and the support sources there, writes build.sh and CMakeLists.txt,
    and compiles libdycl_model.so and dycl_model with g++ (the translation units at
    once; dycl_capi.o and main.o come from the object cache when they can). Returns
    the files written, name → sha256. A compile or link error raises BackendError
    with the compiler's first error lines."""
    out_dir = Path(out_dir)
    host_cpp = Path(host_cpp)
    includes, libs = tvm_paths()
    cxx = _compiler()
    if not host_cpp.is_file():
        raise BackendError(f"no C++ host source '{host_cpp}'")
    out_dir.mkdir(parents=True, exist_ok=True)

    written: list[str] = []
    if host_cpp.resolve() != (out_dir / HOST_FILE).resolve():
        shutil.copyfile(host_cpp, out_dir / HOST_FILE)
        written.append(HOST_FILE)
    for name in SUPPORT_FILES:
        shutil.copyfile(SUPPORT_DIR / name, out_dir / name)
        written.append(name)
    script = out_dir / "build.sh"
    script.write_text(_build_script(cxx, includes, libs))
    script.chmod(0o755)
    (out_dir / "CMakeLists.txt").write_text(_cmake(includes, libs))
    written += ["build.sh", "CMakeLists.txt"]

    cache = _object_cache(cxx, includes, libs)
    with tempfile.TemporaryDirectory(prefix="dycl-cpp-") as tmp:
        obj = Path(tmp)
        compiles, links = _commands(cxx, out_dir, obj, out_dir, includes, libs)
        cached = ("dycl_capi.o", "main.o")
        todo = []
        for cmd in compiles:
            name = Path(cmd[-1]).name
            if cache is not None and name in cached and (cache / name).is_file():
                shutil.copyfile(cache / name, obj / name)
            else:
                todo.append(cmd)
        _run(todo)
        if cache is not None:
            try:
                cache.mkdir(mode=0o700, parents=True, exist_ok=True)
                for name in cached:
                    if not (cache / name).is_file():
                        part = cache / f"{name}.{os.getpid()}.tmp"
                        shutil.copyfile(obj / name, part)
                        os.replace(part, cache / name)
            except OSError:
                pass  # a cache is best effort
        for cmd in links:
            _run([cmd])
    written += [LIBRARY, EXECUTABLE]
    return {name: _sha256(out_dir / name) for name in written}
