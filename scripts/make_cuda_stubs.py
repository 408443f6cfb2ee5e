#!/usr/bin/env python3
"""Builds do-nothing stand-ins for the CUDA libraries that a torch wheel's libraries link against
but that a machine without a GPU does not need to install.

PyPI's torch 2.15.0 wheel is a CUDA build. Its C++ core for CPU use, libtorch_cpu.so, needs only
libcudart and libcupti (installed for real). But libtorch_cuda.so, which `import torch` loads
(torch/_C -> libtorch_python.so -> libtorch.so) and which a -DTFT_WITH_CUDA=ON build of tftrain
links, needs cuDNN, cuBLAS, NCCL, cuSPARSELt, NVSHMEM, cuFFT, cuSPARSE, cuFile and NVRTC too:
several GB of wheels that a run without a GPU never calls. For each such library that the
dynamic loader cannot find, this script compiles a small shared library with the same SONAME,
the same symbol-version node, and every symbol the torch libraries import from it, each a
function that aborts with a message if it is ever called. Two users:

  - bench/peer/setup.sh: peer_bench.py loads them (RTLD_GLOBAL) before `import torch`; the
    loader then takes them for the missing libraries, since glibc matches a DT_NEEDED name
    against the SONAMEs of the libraries already loaded.
  - scripts/test.sh --cuda-compile: the linker and the loader find them through
    LD_LIBRARY_PATH, so the CUDA build links and its tests run (the CUDA ones skip: no GPU).

A GPU needs the real libraries, and then no stubs are made.

    make_cuda_stubs.py TORCH_LIB_DIR OUT_DIR

Writes OUT_DIR/<soname> for each missing library and OUT_DIR/MANIFEST (one soname a line, in
load order). Exits 0 with an empty MANIFEST when nothing is missing. Needs cc, nm, readelf, ldd.
"""
import os
import re
import subprocess
import sys
import tempfile

# The libraries that `import torch` loads; their DT_NEEDED closure is what must resolve.
ROOTS = ("libtorch_python.so", "libtorch_global_deps.so")


def run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def ldd_matches(torch_lib: str, pattern: str) -> list[str]:
    """The first group of `pattern` over ldd's lines for the roots, each once, in order."""
    found: list[str] = []
    for root in ROOTS:
        for line in run("ldd", os.path.join(torch_lib, root)).splitlines():
            hit = re.match(pattern, line)
            if hit and hit.group(1) not in found:
                found.append(hit.group(1))
    return found


def missing_sonames(torch_lib: str) -> list[str]:
    return ldd_matches(torch_lib, r"\s*(\S+) => not found")


def present_libraries(torch_lib: str) -> list[str]:
    """Paths of the libraries ldd does find for the roots (torch's own and the system's)."""
    return ldd_matches(torch_lib, r"\s*\S+ => (/\S+)")


def defined_symbols(path: str) -> set[str]:
    out = set()
    for line in run("nm", "-D", "--defined-only", path).splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out.add(parts[2].split("@")[0])
    return out


def version_needs(path: str) -> dict[str, str]:
    """Version node name -> the file (soname) that must define it, from .gnu.version_r."""
    needs: dict[str, str] = {}
    current = None
    for line in run("readelf", "-V", "-W", path).splitlines():
        file_hit = re.search(r"File: (\S+)", line)
        if file_hit and "Cnt:" in line:
            current = file_hit.group(1)
            continue
        name_hit = re.search(r"Name: (\S+)\s+Flags:", line)
        if name_hit and current is not None:
            needs[name_hit.group(1)] = current
    return needs


def needed(path: str) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", "-W", path))


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: make_cuda_stubs.py TORCH_LIB_DIR OUT_DIR", file=sys.stderr)
        return 2
    torch_lib, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    missing = missing_sonames(torch_lib)
    torch_libs = [os.path.join(torch_lib, f) for f in sorted(os.listdir(torch_lib)) if f.endswith(".so")]

    # Everything some library in the process will define: torch's own and the present deps.
    defined: set[str] = set()
    for path in torch_libs + present_libraries(torch_lib):
        defined |= defined_symbols(path)

    # soname -> {symbol: version node or None}
    wanted: dict[str, dict[str, str | None]] = {s: {} for s in missing}
    for path in torch_libs:
        deps = needed(path)
        missing_deps = [s for s in missing if s in deps]
        if not missing_deps:
            continue
        nodes = version_needs(path)
        unversioned_owners = [s for s in missing_deps if s not in nodes.values()]
        for line in run("nm", "-D", "--undefined-only", path).splitlines():
            parts = line.split()
            if len(parts) != 2 or parts[0] != "U":
                continue  # weak references need no definition
            name, _, version = parts[1].partition("@")
            version = version.lstrip("@")
            if version:
                owner = nodes.get(version)
                if owner in wanted:
                    wanted[owner][name] = version
            elif name not in defined and not name.startswith(("Py", "_Py")):
                # No version says whose it is: give it to every unversioned missing library of
                # this file (the first one loaded wins; the rest are never looked at).
                for owner in unversioned_owners:
                    wanted[owner].setdefault(name, None)

    with tempfile.TemporaryDirectory() as tmp:
        for soname in missing:
            symbols = wanted[soname]
            source = os.path.join(tmp, "stub.c")
            with open(source, "w") as f:
                f.write("#include <stdio.h>\n#include <stdlib.h>\n")
                f.write("static void tft_stub_called(const char* name) {\n"
                        f'  fprintf(stderr, "CUDA stub: %s of {soname} was called; this venv has no '
                        f'real CUDA libraries, only stand-ins (scripts/make_cuda_stubs.py)\\n", name);\n'
                        "  abort();\n}\n")
                for i, name in enumerate(sorted(symbols)):
                    f.write(f'void tft_stub_{i}(void) __asm__("{name}");\n'
                            f'void tft_stub_{i}(void) {{ tft_stub_called("{name}"); }}\n')
            cmd = ["cc", "-shared", "-fPIC", "-O1", "-o", os.path.join(out_dir, soname),
                   f"-Wl,-soname,{soname}", source]
            nodes = sorted({v for v in symbols.values() if v})
            if nodes:
                script = os.path.join(tmp, "versions.map")
                with open(script, "w") as f:
                    for node in nodes:
                        # An unversioned reference binds to any definition: put those in the
                        # first node (ld allows no anonymous node beside named ones).
                        names = "".join(f" {n};" for n, v in sorted(symbols.items())
                                        if v == node or (v is None and node == nodes[0]))
                        f.write(f"{node} {{ global:{names} }};\n")
                cmd.append(f"-Wl,--version-script={script}")
            subprocess.run(cmd, check=True)
            print(f"stub {soname}: {len(symbols)} symbols", file=sys.stderr)
    with open(os.path.join(out_dir, "MANIFEST"), "w") as f:
        f.writelines(s + "\n" for s in missing)
    return 0


if __name__ == "__main__":
    sys.exit(main())
