#!/usr/bin/env python3
"""Fails unless every dynamic symbol LIBRARY leaves undefined is defined by a library it NEEDs.

    check_needed_symbols.py LIBRARY

A symbol that only resolves because some other library in the process happens to export it
(pyarrow's libparquet carries OpenSSL's EVP_* functions, for one) works on the machine that
built it and breaks in a host that loads another build of that library, or loads it later.
Weak references are skipped: the library checks those at run time. A versioned reference
(EVP_sha256@OPENSSL_3.0.0) needs a definition of that version; an unversioned one, the name.
The NEEDED libraries are found where the dynamic loader finds them (ldd), so LD_LIBRARY_PATH and
RUNPATH count exactly as they do when the library is loaded.

Some symbols also have an owner: the library they must come from, whoever else exports a copy
(OWNERS). pyarrow's libparquet exporting EVP_* is the case that made this rule.
"""
import re
import subprocess
import sys


# Symbol prefix -> the library (soname prefix) that must define it and be NEEDED.
OWNERS = {
    "EVP_": "libcrypto.so",  # SHA-256 of saved models and snapshots (common/sha256.cpp)
    "_ZN4YAML": "libyaml-cpp.so",  # the YAML configs
}


def dynamic_symbols(path, which):
    out = subprocess.run(["nm", "-D", which, path], check=True, capture_output=True,
                         text=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        symbols.append((kind, name))
    return symbols


def split_version(symbol):
    name, _, version = symbol.partition("@")
    return name, version.lstrip("@")


def needed_paths(library):
    dynamic = subprocess.run(["readelf", "-d", library], check=True, capture_output=True,
                             text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    resolved = {}
    ldd = subprocess.run(["ldd", library], check=True, capture_output=True, text=True).stdout
    for line in ldd.splitlines():
        hit = re.match(r"\s*(\S+) => (\S+)", line)
        if hit:
            resolved[hit.group(1)] = hit.group(2)
        hit = re.match(r"\s*(/\S+) \(0x", line)  # the loader itself
        if hit:
            resolved[hit.group(1).rsplit("/", 1)[-1]] = hit.group(1)
    missing = [name for name in needed if resolved.get(name, "not found") == "not found"]
    if missing:
        sys.exit(f"{library}: the loader finds no {', '.join(missing)}")
    return {name: resolved[name] for name in needed}


def main():
    library = sys.argv[1]
    undefined = [name for kind, name in dynamic_symbols(library, "--undefined-only")
                 if kind == "U"]
    defined_names, defined_versions = set(), set()
    definers = {}  # name -> the NEEDED libraries that define it
    versioned = set()  # (soname, name) where that library gives the symbol a version
    libraries = needed_paths(library)
    for soname, path in libraries.items():
        for _, symbol in dynamic_symbols(path, "--defined-only"):
            name, version = split_version(symbol)
            defined_names.add(name)
            defined_versions.add((name, version))
            definers.setdefault(name, set()).add(soname)
            if version:
                versioned.add((soname, name))
    unresolved = []
    for symbol in undefined:
        name, version = split_version(symbol)
        found = (name, version) in defined_versions if version else name in defined_names
        owner = next((lib for prefix, lib in OWNERS.items() if name.startswith(prefix)), None)
        if owner and not any(lib.startswith(owner) for lib in definers.get(name, ())):
            unresolved.append(f"{symbol} (must come from {owner}*, which is not NEEDED or "
                              f"does not define it; defined by: "
                              f"{', '.join(sorted(definers.get(name, ()))) or 'nothing'})")
        elif owner and not version and any(
                lib.startswith(owner) and (lib, name) in versioned for lib in definers[name]):
            unresolved.append(f"{symbol} (unversioned: bound at link time to a copy other than "
                              f"{owner}*'s; link {owner} first)")
        elif not found:
            unresolved.append(symbol)
    if unresolved:
        shown = "\n  ".join(sorted(unresolved)[:40])
        sys.exit(f"{library}: {len(unresolved)} undefined symbol(s) that none of its NEEDED "
                 f"libraries ({', '.join(libraries)}) defines:\n  {shown}")
    print(f"{library}: all {len(undefined)} undefined symbols are defined by its "
          f"{len(libraries)} NEEDED libraries")


if __name__ == "__main__":
    main()
