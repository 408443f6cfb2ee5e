#!/usr/bin/env bash
# Builds the Python package's source distribution:
#
#   scripts/make-sdist.sh [OUT_DIR]   (default dist)
#
# OUT_DIR receives tftrain-<version>.tar.gz: the sources libtftrain is built from
# (CMakeLists.txt, cmake/, src/, capi/, as git tracks them) and the Python package
# (bindings/python), laid out as one scikit-build-core project. Its pyproject.toml is
# bindings/python's with the paths that point up into the repository rewritten to the sdist's
# own root; every rewrite must apply, so a change to the original cannot silently break it.
#
# Building it needs what building the wheel needs (README, "Build from source"): a C++20
# compiler, CMake, Ninja, Debian's yaml-cpp, nlohmann-json and OpenSSL headers, and the pinned
# torch and pyarrow wheels installed in the environment it builds in, hence
#
#   pip install torch==<pin> pyarrow==<pin> scikit-build-core
#   pip install --no-build-isolation tftrain-<version>.tar.gz
#
# (pip's isolated build environment would have to download torch and its CUDA packages, several
# GB, to compile against headers the environment already has). scripts/python-consumer-test.sh
# does exactly that in a fresh venv.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p "${1:-dist}"
out=$(cd "${1:-dist}" && pwd)

venv="${TFT_RELEASE_VENV:-$HOME/.cache/tftrain/venv-release}"
tools=(build==1.6.1 scikit-build-core==1.1.2)
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('build') != '1.6.1' or m.version('scikit-build-core') != '1.1.2')" 2>/dev/null; then
  echo "make-sdist: installing ${tools[*]} from PyPI into $venv" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q "${tools[@]}" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/tftrain"
mkdir -p "$stage"
# The tracked files only: nothing built, cached or untracked travels.
git ls-files -z -- CMakeLists.txt cmake src capi bindings/python/src |
  tar --null -T - -cf - | tar -xf - -C "$stage"
cp bindings/python/README.md "$stage/README.md"

# bindings/python/pyproject.toml, its paths rewritten from bindings/python to the sdist's root.
rewrite() {  # FILE FROM TO: replaces the one line FROM with TO, or fails
  local count
  count=$(grep -c -x -F -- "$2" "$1" || true)
  if [ "$count" != 1 ]; then
    echo "make-sdist: expected the line '$2' once in bindings/python/pyproject.toml," \
      "found it $count times" >&2
    exit 1
  fi
  FROM="$2" TO="$3" python3 -c '
import os, sys
path = sys.argv[1]
lines = open(path).read().split("\n")
open(path, "w").write("\n".join(os.environ["TO"] if l == os.environ["FROM"] else l for l in lines))
' "$1"
}
pyproject="$stage/pyproject.toml"
cp bindings/python/pyproject.toml "$pyproject"
rewrite "$pyproject" 'cmake.source-dir = "../.."' 'cmake.source-dir = "."'
# No build folder of the repository's: pip builds the sdist in a temporary one.
rewrite "$pyproject" 'build-dir = "../../build-python"' ''
rewrite "$pyproject" 'wheel.packages = ["src/tftrain"]' \
  'wheel.packages = ["bindings/python/src/tftrain"]'
rewrite "$pyproject" 'input = "../../CMakeLists.txt"' 'input = "CMakeLists.txt"'

(cd "$stage" && "$venv/bin/python" -m build --sdist --no-isolation --outdir "$out" . >"$work/build.log" 2>&1) || {
  cat "$work/build.log" >&2
  exit 1
}
sdist=$(sed -n 's/^Successfully built //p' "$work/build.log")
echo "make-sdist: $out/$sdist ($(du -k "$out/$sdist" | cut -f1) KiB)" >&2
echo "$out/$sdist"
