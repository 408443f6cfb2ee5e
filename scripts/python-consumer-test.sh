#!/usr/bin/env bash
# The Python package as a user gets it, the built wheel or the sdist, installed from the file
# into a fresh venv: the installed libtftrain must load nothing from outside that venv but the
# C and C++ runtimes (and, built from the sdist, the machine's own yaml-cpp and libcrypto), and
# it must train the S&P 500 example (examples/python/sp500.py) with nothing of the build on any
# path.
#
#   scripts/python-consumer-test.sh PACKAGE    a .whl (make-wheel.sh) or .tar.gz (make-sdist.sh)
#
# torch and pyarrow go into the venv first, as scripts/setup-deps.sh installs them (the pinned
# versions, --no-deps, and the CUDA runtime libraries libtorch_cpu loads): `pip install WHEEL`
# alone would also fetch torch's several GB of CUDA Python packages, which libtftrain never
# uses. The package then installs with --no-deps, timed; pandas comes for the example. The sdist
# compiles libtftrain against that venv's torch and pyarrow (--no-build-isolation, with
# scikit-build-core installed first), and the set-up venv is hidden from its build: it must
# build from the sdist and the environment alone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
package=$(realpath "$1")
case "$package" in
  *.whl) kind=wheel ;;
  *.tar.gz) kind=sdist ;;
  *) echo "python-consumer-test: expected a .whl or a .tar.gz, got '$1'" >&2; exit 2 ;;
esac
torch_venv="${TFT_TORCH_VENV:-$HOME/.cache/tftrain/venv-torch}"

work=$(mktemp -d "${TMPDIR:-/tmp}/tftrain-python-consumer.XXXXXX")
trap 'echo "python-consumer-test: FAILED; the work is in $work" >&2' ERR
unset LD_LIBRARY_PATH PYTHONPATH TFTRAIN_LIBRARY TFT_TORCH_PREFIX CCACHE_BASEDIR
python3 -m venv "$work/venv"
pip=("$work/venv/bin/pip" install -q --disable-pip-version-check)
version() { "$torch_venv/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))"; }
"${pip[@]}" --no-deps "torch==$(version torch)" "pyarrow==$(version pyarrow)" \
  "nvidia-cuda-runtime==$(version nvidia-cuda-runtime)" \
  "nvidia-cuda-cupti==$(version nvidia-cuda-cupti)"
if [ "$kind" = sdist ]; then
  "${pip[@]}" scikit-build-core==1.1.2
  install=(env "TFT_TORCH_VENV=$work/no-set-up-venv" "${pip[@]}" --no-build-isolation)
else
  install=("${pip[@]}")
fi
start=$EPOCHREALTIME
"${install[@]}" --no-deps "$package" >"$work/install.log" 2>&1 || {
  cat "$work/install.log" >&2
  false
}
seconds=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $start }")
"${pip[@]}" pandas

# What the installed libtftrain loads: the venv, or the C and C++ runtimes; a build from the
# sdist also links the machine's yaml-cpp and libcrypto, as any source build does.
site=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
library="$site/tftrain/libtftrain.so.0"
allowed='^(libc|libm|libdl|libpthread|librt|libutil|libstdc\+\+|libgcc_s)\.so'
[ "$kind" = wheel ] || allowed='^(libc|libm|libdl|libpthread|librt|libutil|libstdc\+\+|libgcc_s|libyaml-cpp|libcrypto)\.so'
outside=$(ldd "$library" | awk '$2 == "=>" { print $1, $3 }' | grep -v " $site/" |
  grep -v -E "$allowed" || true)
if ldd "$library" | grep -q 'not found' || [ -n "$outside" ]; then
  echo "python-consumer-test: the installed libtftrain loads from outside the venv:" >&2
  ldd "$library" >&2
  exit 1
fi

cd "$work"  # not the repository: `import tftrain` must find the installed package
"$work/venv/bin/python" -c "import tftrain, sys; sys.exit(not tftrain.__file__.startswith('$site'))"
"$work/venv/bin/python" "$root/examples/python/sp500.py" "$work/sp500" >"$work/sp500.out" \
  2>"$work/sp500.err"
grep -q '^validation loss ' "$work/sp500.out"
echo "python-consumer-test: OK: $(basename "$package") installed into a fresh venv in" \
  "${seconds} s (--no-deps$([ "$kind" = wheel ] || echo ', compiled from source')), loads" \
  "nothing outside it but the C and C++ runtimes$([ "$kind" = wheel ] || echo ', yaml-cpp and libcrypto'), and trained sp500:" \
  "$(grep '^validation loss ' "$work/sp500.out")"
rm -rf "$work"
trap - ERR
