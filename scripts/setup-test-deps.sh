#!/usr/bin/env bash
# Installs what only the tests and the language bindings need, beyond the build's own
# dependencies (scripts/setup-deps.sh, which calls this unless --build-only): the Python
# package's test venv, nanoarrow's C sources, the Rust crates and the Go modules. Debian's test
# packages (cmocka, valgrind, SWIG, Mono) are in setup-deps.sh's list, with its one apt-get.
#
# Environment: TFT_PYTHON_VENV (default ~/.cache/tftrain/venv-python), TFT_PYARROW_VERSION (the
# pin setup-deps.sh passes), TFT_NANOARROW_DIR, TFT_GO_MODCACHE.
set -euo pipefail
arrow_version="${TFT_PYARROW_VERSION:?setup-test-deps.sh: run scripts/setup-deps.sh, which sets TFT_PYARROW_VERSION}"

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
