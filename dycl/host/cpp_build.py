"""Building the C++ host of an artifact: the generated `host.cpp` plus the fixed
support in `cpp_support/` → `libdycl_model.so` (the C API of dycl_model.h) and the
`dycl_model` command, linked against the TVM runtime of the installed wheel. A host
with Inductor sub-DNNs (host.cpp defines DYCL_WITH_AOTI) also gets `dycl_aoti.h`,
the torch wheel's headers and C++ ABI flag, and links libtorch.

The support sources, a `build.sh` (plain g++ commands) and a `CMakeLists.txt` are
copied next to them, so the artifact can be rebuilt without dycl.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dycl.diagnostics import BackendError

SUPPORT_DIR = Path(__file__).parent / "cpp_support"
SUPPORT_FILES = ("dycl_runtime.h", "dycl_model.h", "dycl_capi.cc", "main.cc")
AOTI_SUPPORT_FILES = ("dycl_aoti.h",)  # only for a host with Inductor sub-DNNs
AOTI_MACRO = "DYCL_WITH_AOTI"  # as dycl.host.cpp.AOTI_MACRO (not imported here: it imports xdsl)
TORCH_LIBS = ("torch", "torch_cpu", "c10")
HOST_FILE = "host.cpp"
LIBRARY = "libdycl_model.so"
EXECUTABLE = "dycl_model"

CXXFLAGS = ["-std=c++17", "-O2", "-fPIC"]
# The library exports only the C API (DYCL_API): two models' hosts in one process
# do not share (or clash on) their C++ symbols.
LIB_CXXFLAGS = ["-fvisibility=hidden", "-fvisibility-inlines-hidden"]


def _package_dir(name: str, install: str = "pip install apache-tvm") -> Path:
    """The directory of an installed package, found without importing it (importing tvm takes ~2 s)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"the C++ host needs the '{name}' package ({install})")
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


@dataclass(frozen=True)
class TorchFlags:
    """What a host with Inductor sub-DNNs is built with: the torch wheel's headers and
    libraries, and the C++ ABI torch was built with (every translation unit uses it,
    as host.cpp and dycl_capi.cc pass std::strings to each other)."""

    include: str
    lib: str
    abi: int

    @property
    def define(self) -> str:
        return f"-D_GLIBCXX_USE_CXX11_ABI={self.abi}"


def uses_aoti(host_source: str) -> bool:
    """Whether a host.cpp loads Inductor sub-DNNs (defines DYCL_WITH_AOTI)."""
    return re.search(rf"^\s*#\s*define\s+{AOTI_MACRO}\b", host_source, re.MULTILINE) is not None


def torch_paths() -> TorchFlags:
    """The installed torch wheel's include and lib directories, and its C++ ABI."""
    torch_dir = _package_dir("torch", "pip install torch")
    include, lib = torch_dir / "include", torch_dir / "lib"
    needed = [include / "torch" / "csrc" / "inductor" / "aoti_package" / "model_package_loader.h",
              *(lib / f"lib{name}.so" for name in TORCH_LIBS)]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        raise BackendError(f"the installed torch lacks what the C++ host needs for Inductor sub-DNNs: "
                           f"{', '.join(missing)}")
    import torch  # imported by every compile already; the ABI is known only to the library

    return TorchFlags(str(include), str(lib), int(torch._C._GLIBCXX_USE_CXX11_ABI))


def _compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise BackendError("the C++ host needs a C++17 compiler: no g++ found (set CXX)")
    return cxx


def _commands(cxx: str, src: Path, obj: Path, out: Path, includes: list[str], libs: list[str],
              torch: TorchFlags | None = None) -> tuple[list[list[str]], list[list[str]]]:
    """(compile commands, run at once; link commands, in order), sources in `src`,
    objects in `obj`, products in `out`; with `torch`, for a host with Inductor sub-DNNs."""
    inc = [f"-I{src}"] + [f"-I{d}" for d in includes]
    flags = [*CXXFLAGS, *([torch.define] if torch else [])]
    # -isystem: torch's headers warn under C++17 (-Wc++20-extensions), harmlessly.
    host_inc = [*inc, *(["-isystem", torch.include] if torch else [])]
    compiles = [
        [cxx, *flags, *LIB_CXXFLAGS, *host_inc, "-c", str(src / HOST_FILE), "-o", str(obj / "host.o")],
        [cxx, *flags, *LIB_CXXFLAGS, *inc, "-c", str(src / "dycl_capi.cc"), "-o", str(obj / "dycl_capi.o")],
        [cxx, *flags, *inc, "-c", str(src / "main.cc"), "-o", str(obj / "main.o")],
    ]
    libs = [*libs, *([torch.lib] if torch else [])]
    lib_dirs = [f"-L{d}" for d in libs]
    torch_libs = [f"-l{name}" for name in TORCH_LIBS] if torch else []
    rpath = ":".join(libs)
    links = [
        # --no-as-needed: the host reaches libtvm_runtime only through the functions it
        # registers when loaded, so no symbol of it is referenced directly.
        [cxx, "-shared", "-o", str(out / LIBRARY), f"-Wl,-soname,{LIBRARY}", "-Wl,-z,defs", str(obj / "host.o"),
         str(obj / "dycl_capi.o"), *lib_dirs, "-Wl,--no-as-needed", "-ltvm_runtime", "-ltvm_runtime_extra", "-ltvm_ffi",
         "-Wl,--as-needed", *torch_libs, "-ldl", f"-Wl,-rpath,{rpath}"],
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


def _build_script(cxx: str, includes: list[str], libs: list[str], torch: TorchFlags | None = None) -> str:
    q = shlex.quote
    # A host with Inductor sub-DNNs: torch's headers (host.cpp), ABI flag (all) and libraries.
    torch_vars = torch_inc = torch_libs = torch_rpath = ""
    if torch:
        torch_vars = (f"# TORCH_INCLUDE, TORCH_LIB_DIR: the torch wheel's (Inductor sub-DNNs, dycl_aoti.h).\n"
                      f"TORCH_INCLUDE=${{TORCH_INCLUDE:-{q(torch.include)}}}\n"
                      f"TORCH_LIB_DIR=${{TORCH_LIB_DIR:-{q(torch.lib)}}}\n")
        torch_inc = ' -isystem "$TORCH_INCLUDE"'
        torch_libs = ' \\\n    -L"$TORCH_LIB_DIR" ' + " ".join(f"-l{name}" for name in TORCH_LIBS)
        torch_rpath = ":$TORCH_LIB_DIR"
    flags = " ".join(CXXFLAGS + ([torch.define] if torch else []))
    return f"""#!/bin/sh
# Rebuilds {LIBRARY} and {EXECUTABLE} from host.cpp and dycl's C++ support (written by dycl).
# TVM_INCLUDE, TVM_LIB_DIR, TVM_FFI_LIB_DIR: the TVM wheel's headers and libraries.
set -e
SRC=$(cd "$(dirname "$0")" && pwd)
CXX=${{CXX:-{q(cxx)}}}
TVM_INCLUDE=${{TVM_INCLUDE:-{q(includes[0])}}}
TVM_LIB_DIR=${{TVM_LIB_DIR:-{q(libs[0])}}}
TVM_FFI_LIB_DIR=${{TVM_FFI_LIB_DIR:-{q(libs[1])}}}
{torch_vars}OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
FLAGS="{flags}"
LIBFLAGS="{' '.join(LIB_CXXFLAGS)}"

$CXX $FLAGS $LIBFLAGS -I"$SRC" -I"$TVM_INCLUDE"{torch_inc} -c "$SRC/{HOST_FILE}" -o "$OBJ/host.o" & P1=$!
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
    -L"$TVM_LIB_DIR" -L"$TVM_FFI_LIB_DIR" -Wl,--no-as-needed -ltvm_runtime -ltvm_runtime_extra -ltvm_ffi -Wl,--as-needed -ldl{torch_libs} \\
    -Wl,-rpath,"$TVM_LIB_DIR:$TVM_FFI_LIB_DIR{torch_rpath}"
$CXX -o "$SRC/{EXECUTABLE}" "$OBJ/main.o" -L"$SRC" -ldycl_model -L"$TVM_FFI_LIB_DIR" -ltvm_ffi \\
    -Wl,-rpath,'$ORIGIN':"$TVM_LIB_DIR:$TVM_FFI_LIB_DIR{torch_rpath}"
"""


def _cmake(includes: list[str], libs: list[str], torch: TorchFlags | None = None) -> str:
    lib_list = ";".join(libs)
    torch_part = torch_libs = torch_rpath = ""
    if torch:  # a host with Inductor sub-DNNs (dycl_aoti.h): torch's headers, ABI and libraries
        torch_part = f"""set(TORCH_INCLUDE "{torch.include}" CACHE PATH "the torch wheel's include directory")
set(TORCH_LIB_DIR "{torch.lib}" CACHE PATH "the torch wheel's libtorch.so directory")
add_compile_definitions(_GLIBCXX_USE_CXX11_ABI={torch.abi})  # torch's C++ ABI, in every target
"""
        torch_libs = f"""
target_include_directories(dycl_model SYSTEM PRIVATE ${{TORCH_INCLUDE}})
target_link_directories(dycl_model PUBLIC ${{TORCH_LIB_DIR}})
target_link_libraries(dycl_model PUBLIC {' '.join(TORCH_LIBS)})"""
        torch_rpath = ";${TORCH_LIB_DIR}"
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
{torch_part}
add_library(dycl_model SHARED host.cpp dycl_capi.cc)
target_include_directories(dycl_model PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}} ${{TVM_INCLUDE}})
target_link_directories(dycl_model PUBLIC ${{TVM_LIBS}})
target_link_libraries(dycl_model PUBLIC -Wl,--no-as-needed tvm_runtime tvm_runtime_extra tvm_ffi -Wl,--as-needed ${{CMAKE_DL_LIBS}}){torch_libs}
target_link_options(dycl_model PRIVATE -Wl,-z,defs)
set_target_properties(dycl_model PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                      BUILD_RPATH "${{TVM_LIBS}}{torch_rpath}" INSTALL_RPATH "${{TVM_LIBS}}{torch_rpath}")

add_executable(dycl_model_cli main.cc)
set_target_properties(dycl_model_cli PROPERTIES OUTPUT_NAME dycl_model
                      BUILD_RPATH "$ORIGIN;${{TVM_LIBS}}{torch_rpath}" INSTALL_RPATH "$ORIGIN;${{TVM_LIBS}}{torch_rpath}")
target_link_libraries(dycl_model_cli PRIVATE dycl_model)
"""


def _object_cache(cxx: str, includes: list[str], libs: list[str], torch: TorchFlags | None = None) -> Path | None:
    """Where dycl_capi.o and main.o are kept between builds: they do not depend on
    host.cpp, only on the support sources, the compiler and the TVM headers. Under
    the build cache's root (`DYCL_CACHE_DIR=off` disables it)."""
    from dycl.build_cache import cache_dir

    root = cache_dir()
    if root is None:
        return None
    h = hashlib.sha256()
    for name in SUPPORT_FILES:
        h.update(name.encode() + b"\0" + (SUPPORT_DIR / name).read_bytes())
    compiler = Path(shutil.which(cxx) or cxx)
    for p in (compiler, Path(includes[0]) / "tvm" / "ffi" / "c_api.h", Path(libs[-1]) / "libtvm_ffi.so"):
        st = p.stat() if p.exists() else None
        h.update(f"{p}:{st and st.st_size}:{st and st.st_mtime_ns}\0".encode())
    h.update(" ".join(CXXFLAGS + LIB_CXXFLAGS + includes).encode())
    if torch:  # the ABI flag: dycl_capi.o and main.o are built with it too
        h.update(f"\0{torch.define}".encode())
    return root / "cpp" / h.hexdigest()[:32]


def build_cpp_host(out_dir: Path, host_cpp: Path) -> list[str]:
    """Builds the C++ host in `out_dir` (the artifact directory): copies `host_cpp`
    (as host.cpp) and the support sources there, writes build.sh and CMakeLists.txt,
    and compiles libdycl_model.so and dycl_model with g++ (the translation units at
    once; dycl_capi.o and main.o come from the object cache when they can). A host
    that defines DYCL_WITH_AOTI (Inductor sub-DNNs) also gets dycl_aoti.h and is
    built against the torch wheel (headers, ABI flag, libtorch). Returns the names
    of the files written (the manifest's seal hashes them). A compile or link error raises BackendError with the
    compiler's first error lines."""
    out_dir = Path(out_dir)
    host_cpp = Path(host_cpp)
    includes, libs = tvm_paths()
    cxx = _compiler()
    if not host_cpp.is_file():
        raise BackendError(f"no C++ host source '{host_cpp}'")
    torch = torch_paths() if uses_aoti(host_cpp.read_text()) else None
    out_dir.mkdir(parents=True, exist_ok=True)

    written: list[str] = []
    if host_cpp.resolve() != (out_dir / HOST_FILE).resolve():
        shutil.copyfile(host_cpp, out_dir / HOST_FILE)
        written.append(HOST_FILE)
    for name in SUPPORT_FILES + (AOTI_SUPPORT_FILES if torch else ()):
        shutil.copyfile(SUPPORT_DIR / name, out_dir / name)
        written.append(name)
    script = out_dir / "build.sh"
    script.write_text(_build_script(cxx, includes, libs, torch))
    script.chmod(0o755)
    (out_dir / "CMakeLists.txt").write_text(_cmake(includes, libs, torch))
    written += ["build.sh", "CMakeLists.txt"]

    cache = _object_cache(cxx, includes, libs, torch)
    with tempfile.TemporaryDirectory(prefix="dycl-cpp-") as tmp:
        obj = Path(tmp)
        compiles, links = _commands(cxx, out_dir, obj, out_dir, includes, libs, torch)
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
    return written
