#!/usr/bin/env bash
# The wheel as a Python user gets it: installed from the file into a fresh venv, it must load
# nothing from outside that venv but the C and C++ runtimes, and train the S&P 500 example
# (examples/python/sp500.py) with nothing of the build on any path.
#
#   scripts/wheel-consumer-test.sh WHEEL
#
# torch and pyarrow go into the venv first, as scripts/setup-deps.sh installs them (the pinned
# versions, --no-deps, and the CUDA runtime libraries libtorch_cpu loads): `pip install WHEEL`
# alone would also fetch torch's several GB of CUDA Python packages, which libtftrain never
# uses. The wheel then installs with --no-deps, timed; pandas comes for the example.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
wheel=$(realpath "$1")
torch_venv="${TFT_TORCH_VENV:-$HOME/.cache/tftrain/venv-torch}"

work=$(mktemp -d "${TMPDIR:-/tmp}/tftrain-wheel-consumer.XXXXXX")
trap 'echo "wheel-consumer-test: FAILED; the work is in $work" >&2' ERR
unset LD_LIBRARY_PATH PYTHONPATH TFTRAIN_LIBRARY
python3 -m venv "$work/venv"
pip=("$work/venv/bin/pip" install -q --disable-pip-version-check)
version() { "$torch_venv/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))"; }
"${pip[@]}" --no-deps "torch==$(version torch)" "pyarrow==$(version pyarrow)" \
  "nvidia-cuda-runtime==$(version nvidia-cuda-runtime)" \
  "nvidia-cuda-cupti==$(version nvidia-cuda-cupti)"
start=$EPOCHREALTIME
"${pip[@]}" --no-deps "$wheel"
seconds=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $start }")
"${pip[@]}" pandas

# What the installed libtftrain loads: the venv, or the C and C++ runtimes.
site=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
library="$site/tftrain/libtftrain.so.0"
outside=$(ldd "$library" | awk '$2 == "=>" { print $1, $3 }' | grep -v " $site/" |
  grep -v -E '^(libc|libm|libdl|libpthread|librt|libutil|libstdc\+\+|libgcc_s)\.so' || true)
if ldd "$library" | grep -q 'not found' || [ -n "$outside" ]; then
  echo "wheel-consumer-test: the installed libtftrain loads from outside the venv:" >&2
  ldd "$library" >&2
  exit 1
fi

cd "$work"  # not the repository: `import tftrain` must find the installed package
"$work/venv/bin/python" -c "import tftrain, sys; sys.exit(not tftrain.__file__.startswith('$site'))"
"$work/venv/bin/python" "$root/examples/python/sp500.py" "$work/sp500" >"$work/sp500.out" \
  2>"$work/sp500.err"
grep -q '^validation loss ' "$work/sp500.out"
echo "wheel-consumer-test: OK: $(basename "$wheel") installed into a fresh venv in ${seconds} s" \
  "(--no-deps), loads nothing outside it but the C and C++ runtimes, and trained sp500:" \
  "$(grep '^validation loss ' "$work/sp500.out")"
rm -rf "$work"
trap - ERR
