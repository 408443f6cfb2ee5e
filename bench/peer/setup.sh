#!/usr/bin/env bash
# Sets up the Python venv of the peer benchmark (bench/peer/peer_bench.py): pytorch-forecasting
# 1.8.0 on PyPI's torch 2.15.0, the torch of tft-bench's LibTorch, in a venv outside the source
# tree ($TFT_PEER_VENV, default ~/.cache/tftrain/venv-peer), and nothing twice.
#
#   bench/peer/setup.sh          CPU: installs requirements.txt with --no-deps, so pip never
#                                pulls torch's multi-GB nvidia-* wheels, and builds stand-ins
#                                for the CUDA libraries that `import torch` links but a CPU run
#                                never calls (scripts/make_cuda_stubs.py; needs cc, nm, readelf)
#   bench/peer/setup.sh --cuda   also installs those CUDA libraries for real
#                                (requirements-cuda.txt, several GB), for --device cuda, and
#                                drops the stand-ins
#
# Fast when everything is in place already. Prints the venv's python on the last line.
set -euo pipefail

with_cuda=0
for arg in "$@"; do
  case "$arg" in
    --cuda) with_cuda=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
venv="${TFT_PEER_VENV:-$HOME/.cache/tftrain/venv-peer}"
py="$venv/bin/python"
changed=0

if [ ! -x "$py" ]; then
  echo "setup: creating the venv $venv" >&2
  python3 -m venv "$venv" >&2
fi

# Prints the pins of a requirements file that are not installed at their version.
unmet_pins() {
  "$py" - "$1" <<'PY'
import importlib.metadata as metadata, sys
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, _, version = line.partition("==")
    try:
        installed = metadata.version(name.strip())
    except metadata.PackageNotFoundError:
        installed = None
    if installed != version.strip():
        print(line)
PY
}

install_pins() {
  local unmet
  unmet=$(unmet_pins "$1")
  if [ -n "$unmet" ]; then
    echo "setup: installing from $(basename "$1"): $(echo $unmet)" >&2
    # --no-deps: the file lists every package; pip resolving torch's own requirements would
    # bring in the CUDA wheels.
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$1" >&2
    changed=1
  fi
}

install_pins "$here/requirements.txt"
if [ "$with_cuda" = 1 ]; then install_pins "$here/requirements-cuda.txt"; fi

# The CUDA libraries that torch's Python module links and the loader cannot find: stand-ins
# for them in $venv/cuda-stubs (peer_bench.py loads them before torch), or none at all.
torch_lib=$("$py" -c "import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec('torch').origin), 'lib'))")
missing=$(ldd "$torch_lib/libtorch_python.so" "$torch_lib/libtorch_global_deps.so" |
          sed -n 's/^[[:space:]]*\([^[:space:]]*\) => not found$/\1/p' | sort -u)
stubs="$venv/cuda-stubs"
if [ -z "$missing" ]; then
  if [ -d "$stubs" ]; then
    echo "setup: the CUDA libraries are installed; removing the stand-ins" >&2
    rm -rf "$stubs"
    changed=1
  fi
elif [ ! -f "$stubs/MANIFEST" ] || [ "$(sort -u "$stubs/MANIFEST")" != "$missing" ] ||
     [ "$torch_lib/libtorch_cuda.so" -nt "$stubs/MANIFEST" ]; then
  echo "setup: building stand-ins for $(echo $missing)" >&2
  rm -rf "$stubs"
  "$py" "$here/../../scripts/make_cuda_stubs.py" "$torch_lib" "$stubs"
  changed=1
fi

if [ "$changed" = 1 ]; then
  "$py" "$here/peer_bench.py" --check-import >&2
fi
echo "$py"
