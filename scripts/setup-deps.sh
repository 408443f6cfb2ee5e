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
#
# Every mode also installs the pinned pyarrow wheel (Arrow C++ and Parquet, for Parquet input)
# into the venv, the Python package's test venv (pytest, pandas, polars, duckdb), nanoarrow's C
# sources (the C runner's data in memory), and, where Go is installed, the Go bindings' modules
# (arrow-go).
#
# Environment: TFT_TORCH_VENV (default ~/.cache/tftrain/venv-torch), TFT_TORCH_WHEEL_VERSION
# and TFT_PYARROW_VERSION (default: the pins below; the versions CI and the benchmarks use),
# TFT_PYTHON_VENV (the Python package's tests, default ~/.cache/tftrain/venv-python).
set -euo pipefail

torch_source=wheel
cuda_dev_headers=no
fuzz=no
for arg in "$@"; do
  case "$arg" in
    --debian) torch_source=debian ;;
    --cuda-dev-headers) cuda_dev_headers=yes ;;
    --fuzz) fuzz=yes ;;
    --torch-wheel) torch_source=wheel ;;  # the default; kept for older instructions
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "setup-deps.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config ccache git
  libyaml-cpp-dev nlohmann-json3-dev libcmocka-dev libcli11-dev libfmt-dev
  libssl-dev  # libcrypto's SHA-256 (saved models' and snapshots' checksums)
  libgloo-dev  # Gloo's headers, which LibTorch's c10d headers include (src/distributed)
  valgrind
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

# The Python package's tests (bindings/python/tests, run by ctest) and runner, in a venv of their
# own ($TFT_PYTHON_VENV, default ~/.cache/tftrain/venv-python) with pinned versions: pytest, the
# data frame libraries the package reads tables from, tqdm for its progress bar. The package
# itself comes from the source tree and the build's libtftrain (TFTRAIN_LIBRARY); the wheel is
# `pip install ./bindings/python`.
python_venv="${TFT_PYTHON_VENV:-$HOME/.cache/tftrain/venv-python}"
python_pins=("pyarrow==$arrow_version" pandas==3.1.1 numpy==2.4.6 polars==2.1.0 duckdb==2.0.1
  pytest==9.2.0 tqdm==4.70.1)
[ -x "$python_venv/bin/python" ] || python3 -m venv "$python_venv" >&2
if ! "$python_venv/bin/python" - "${python_pins[@]}" <<'PY' 2>/dev/null; then
import importlib.metadata as m, sys
sys.exit(any(m.version(name) != version for name, version in (p.split("==") for p in sys.argv[1:])))
PY
  echo "setup-deps: installing ${python_pins[*]} from PyPI into $python_venv" >&2
  "$python_venv/bin/pip" install -q "${python_pins[@]}" >&2
fi

# nanoarrow (Apache Arrow's C library), for the C runner's --memory mode: the C sources of its
# PyPI sdist, checked against the pinned SHA-256 and unpacked into $TFT_NANOARROW_DIR (default
# ~/.cache/tftrain/nanoarrow-<version>); examples/CMakeLists.txt compiles them into the runner.
# No registry here packages nanoarrow's C library on its own (Debian 12 has none).
nanoarrow_version=0.9.0
nanoarrow_dir="${TFT_NANOARROW_DIR:-$HOME/.cache/tftrain/nanoarrow-$nanoarrow_version}"
if [ ! -f "$nanoarrow_dir/src/nanoarrow/nanoarrow.h" ]; then
  echo "setup-deps: fetching nanoarrow $nanoarrow_version's C sources from PyPI" >&2
  python3 - "$nanoarrow_dir" "$nanoarrow_version" <<'PY'
import hashlib, io, os, shutil, sys, tarfile, tempfile, urllib.request
target, version = sys.argv[1], sys.argv[2]
url = ("https://files.pythonhosted.org/packages/bc/b2/"
       "8fedfa966cc25126e1c9090e6d9fed75dab4e1d2716e3ca2d18ea2d6f438/nanoarrow-0.9.0.tar.gz")
sha256 = "1ce15bbed8532839347faa78824c5dbd3769bff60661003e34c6fba5dd881bd3"
payload = urllib.request.urlopen(url, timeout=120).read()
if hashlib.sha256(payload).hexdigest() != sha256:
    sys.exit(f"setup-deps: {url}: SHA-256 mismatch (expected {sha256})")
prefix = f"nanoarrow-{version}/subprojects/arrow-nanoarrow/"
os.makedirs(os.path.dirname(target), exist_ok=True)
staging = tempfile.mkdtemp(dir=os.path.dirname(target))
with tarfile.open(fileobj=io.BytesIO(payload)) as archive:
    members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
    for m in members:
        m.name = m.name[len(prefix):]
    members = [m for m in members if m.name]
    if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: refuse links and paths leaving staging
        archive.extractall(staging, members=members, filter="data")
    else:
        archive.extractall(staging, members=members)
shutil.rmtree(target, ignore_errors=True)
os.rename(staging, target)  # whole or not at all: a half-unpacked folder is never seen
PY
fi

# The Rust binding's and runner's crates.io crates (arrow-rs, for data in memory), at the
# versions their Cargo.lock files pin, into Cargo's cache: the build and ctest run cargo
# --offline --locked.
cargo_bin="$(command -v cargo || echo "$HOME/.cargo/bin/cargo")"
if [ -x "$cargo_bin" ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  for manifest in "$root/bindings/rust/Cargo.toml" "$root/examples/rust/Cargo.toml"; do
    if ! "$cargo_bin" fetch --locked --offline --manifest-path "$manifest" >/dev/null 2>&1; then
      echo "setup-deps: fetching the crates of $manifest from crates.io" >&2
      "$cargo_bin" fetch --locked --manifest-path "$manifest" >&2
    fi
  done
fi

# The Go bindings' modules (arrow-go, checked against go.sum) into the module cache that the
# build reads offline (GOPROXY=off; bindings/CMakeLists.txt): TFT_GO_MODCACHE, default
# ~/.cache/tftrain/go-mod. Without Go the Go binding is skipped, so this is too.
go_bin=$(command -v go || echo /usr/local/go/bin/go)
if [ -x "$go_bin" ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  for module in bindings/go examples/go; do
    (cd "$root/$module" && GOMODCACHE="${TFT_GO_MODCACHE:-$HOME/.cache/tftrain/go-mod}" \
      GOFLAGS=-mod=mod GOTOOLCHAIN=local "$go_bin" mod download) >&2
  done
fi

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
