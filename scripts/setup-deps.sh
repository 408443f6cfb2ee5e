#!/usr/bin/env bash
# Installs everything tftrain's build and tests need, and nothing twice.
#
#   scripts/setup-deps.sh            LibTorch 2.x (the default): the pinned `torch` wheel from
#                                    PyPI in a venv outside the source tree ($TFT_TORCH_VENV),
#                                    plus Debian's build packages. Prints the LibTorch prefix
#                                    (for -DTFT_TORCH_PREFIX) on its last line.
#   scripts/setup-deps.sh --debian   Debian's LibTorch 1.13 (libtorch-dev + OpenBLAS) instead.
#   scripts/setup-deps.sh --cuda-dev-headers
#                                    the wheel, plus the headers a -DTFT_WITH_CUDA=ON build needs
#                                    for c10d's NCCL backend (NCCL, cuBLAS, cuSPARSE, cuSOLVER,
#                                    CCCL: 17 MB of the wheel's pinned packages, no libraries).
#   scripts/setup-deps.sh --fuzz     the wheel, plus clang-14 and its libFuzzer and sanitizer
#                                    runtimes (libclang-rt-14-dev), for scripts/fuzz.sh.
#   scripts/setup-deps.sh --build-only
#                                    only what the library and the tft-train runner build from
#                                    (the main job, scripts/run-example.sh): the wheel, pyarrow and
#                                    Debian's build packages; none of the tests' and bindings'
#                                    tools below. Combines with the options above.
#
# Every mode also installs the pinned pyarrow wheel (Arrow C++ and Parquet, for Parquet input)
# into the venv. Unless --build-only: cmocka, valgrind, SWIG and Mono (the tests and the C#
# binding), the Python package's test venv (pytest, pandas, polars, duckdb), nanoarrow's C
# sources (the C runner's data in memory), the Rust crates and, where Go is installed, the Go
# bindings' modules (arrow-go).
#
# Environment: TFT_TORCH_VENV (default ~/.cache/tftrain/venv-torch), TFT_TORCH_WHEEL_VERSION
# and TFT_PYARROW_VERSION (default: the pins below; the versions CI and the benchmarks use),
# TFT_PYTHON_VENV (the Python package's tests, default ~/.cache/tftrain/venv-python).
set -euo pipefail

torch_source=wheel
cuda_dev_headers=no
fuzz=no
build_only=no
for arg in "$@"; do
  case "$arg" in
    --debian) torch_source=debian ;;
    --cuda-dev-headers) cuda_dev_headers=yes ;;
    --fuzz) fuzz=yes ;;
    --build-only) build_only=yes ;;
    --torch-wheel) torch_source=wheel ;;  # the default; kept for older instructions
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "setup-deps.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config ccache git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libssl-dev  # libcrypto's SHA-256 (saved models' and snapshots' checksums)
  libgloo-dev  # Gloo's headers, which LibTorch's c10d headers include (src/distributed)
)
[ "$build_only" = yes ] || packages+=(
  libcmocka-dev valgrind
  swig mono-mcs mono-runtime libmono-system-core4.0-cil libmono-system-numerics4.0-cil
)
# Go and Rust come from the machine (/usr/local/go, ~/.cargo): the bindings need Go >= 1.22.7 and
# Rust >= 1.82, newer than Debian 12's; without them those bindings are skipped, not failed.
if [ "$torch_source" = debian ]; then
  # libopenblas0-pthread matters: without it Debian's LibTorch runs on reference BLAS (3-4x
  # slower).
  packages+=(libtorch-dev libopenblas0-pthread)
fi
packages+=(python3-venv python3-pip)  # the venv of the torch and pyarrow wheels
[ "$fuzz" = no ] || packages+=(clang-14 libclang-rt-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
fi

venv="${TFT_TORCH_VENV:-$HOME/.cache/tftrain/venv-torch}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
# Apache Arrow C++ and Parquet (Parquet input; Debian 12 packages no libarrow-dev) come with the
# pyarrow wheel: its libarrow.so.N, libparquet.so.N and headers (cmake/TftArrow.cmake). Every
# leg reads Parquet, so it goes into the venv whichever LibTorch is used.
arrow_version="${TFT_PYARROW_VERSION:-26.0.1}"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('pyarrow') != '$arrow_version')" 2>/dev/null; then
  echo "setup-deps: installing pyarrow==$arrow_version from PyPI into $venv" >&2
  "$venv/bin/pip" install -q --no-deps "pyarrow==$arrow_version" >&2
fi

# What only the tests and the bindings need (the main job, --build-only, skips it).
[ "$build_only" = yes ] || TFT_PYARROW_VERSION="$arrow_version" "$(dirname "$0")/setup-test-deps.sh"

[ "$torch_source" = wheel ] || exit 0

version="${TFT_TORCH_WHEEL_VERSION:-2.15.0}"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('torch') != '$version')" 2>/dev/null; then
  echo "setup-deps: installing torch==$version from PyPI into $venv" >&2
  # --no-deps: we only need LibTorch (headers, libtorch_cpu, libc10), not its Python deps.
  "$venv/bin/pip" install -q --no-deps "torch==$version" >&2
fi
# The wheel's libtorch_cpu.so is linked against libcudart and libcupti even for CPU use;
# install just those two, at the CUDA toolkit version the wheel was built with, and the CUDA
# runtime's headers (crt, 0.1 MB), which a -DTFT_WITH_CUDA=ON build compiles against.
cuda_pin=$("$venv/bin/python" - <<'PY'
import importlib.metadata as m, re
for req in m.requires("torch") or []:
    hit = re.match(r"cuda-toolkit\[[^\]]*\]\s*==\s*([0-9.]+)", req)
    if hit:
        print(hit.group(1))
PY
)
if [ -n "$cuda_pin" ] && ! "$venv/bin/python" -c "import importlib.metadata as m; m.version('nvidia-cuda-runtime'); m.version('nvidia-cuda-cupti'); m.version('nvidia-cuda-crt')" 2>/dev/null; then
  echo "setup-deps: installing the CUDA runtime (cuda-toolkit $cuda_pin: cudart, cupti, crt)" >&2
  "$venv/bin/pip" install -q "cuda-toolkit[cudart,cupti,crt]==$cuda_pin" >&2
fi
if [ "$cuda_dev_headers" = yes ]; then
  "$venv/bin/python" "$(dirname "$0")/install_cuda_dev_headers.py" >&2
fi
"$venv/bin/python" - <<'PY'
import importlib.util, os
spec = importlib.util.find_spec("torch")
print(os.path.dirname(spec.origin))
PY
