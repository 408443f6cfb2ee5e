#!/usr/bin/env bash
# Prepares bench/gpu/payload/ HERE (Debian 12, with network) for one call on a lent GPU machine,
# which has no network and none of our Debian build packages:
#   deps/    Debian 12 .debs unpacked with `dpkg -x` (no root): yaml-cpp, nlohmann-json, CLI11,
#            cmocka, Gloo's headers (src/distributed), and pkgconf + ninja for a machine that lacks them (run.sh puts their bin/
#            at the END of PATH, so the machine's own win). The CMake config files compute their
#            prefix from their own location; the .pc files are rewritten here to ${pcfiledir}.
#   wheels/  the two peer wheels the machine lacks (pytorch-forecasting, scikit-base), at the
#            versions pinned in bench/peer/requirements.txt.
# Idempotent: a second run only checks. Pass the folder to the device call as
# carry=["bench/gpu/payload"] (bench/gpu/README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
payload="$here/payload"
deps="$payload/deps"
wheels="$payload/wheels"
packages=(libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev libcmocka-dev libcmocka0
          libgloo-dev pkgconf-bin libpkgconf3 ninja-build)

# --- Debian packages --------------------------------------------------------------------------
stamp="$deps/.packages"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${packages[*]}" ]]; then
  echo "deps: up to date ($deps)"
else
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp"   # apt-get download drops to user _apt where it can
  (cd "$tmp" && apt-get download "${packages[@]}")
  rm -rf "$deps"
  mkdir -p "$deps"
  for deb in "$tmp"/*.deb; do
    dpkg -x "$deb" "$deps"
    dpkg-deb -f "$deb" Package Version | paste -sd' ' >>"$deps/.versions"
  done
  rm -rf "$deps/usr/share/doc" "$deps/usr/share/man" "$deps/usr/share/lintian"
  # pkg-config files: absolute /usr -> relative to the .pc file itself.
  while IFS= read -r pc; do
    rel="$(realpath --relative-to="$(dirname "$pc")" "$deps/usr")"
    sed -E -i "s#(^|[= ]|-L|-I)/usr(/|\$| )#\\1\${pcfiledir}/$rel\\2#g" "$pc"
  done < <(find "$deps" -name '*.pc')
  # Debian ships pkgconf as `pkgconf`; check_consumer.sh and FindPkgConfig look for pkg-config.
  cp "$deps/usr/bin/pkgconf" "$deps/usr/bin/pkg-config"
  # Only the shared library travels (the targets file names libyaml-cpp.so.0.7.0 alone).
  rm -f "$deps/usr/lib/x86_64-linux-gnu/libyaml-cpp.a"
  # Gloo travels for its headers only (LibTorch has Gloo's code built in): drop its library
  # links, which point into libgloo0, a package not taken.
  rm -rf "$deps"/usr/lib/libgloo* "$deps"/usr/share/cmake/Gloo
  # Links become plain copies: the device call's carry need not keep symbolic links.
  while IFS= read -r link; do
    target="$(readlink -f "$link")"
    rm "$link"
    cp "$target" "$link"
  done < <(find "$deps" -type l)
  # The CMake package files must not name /usr themselves (they compute _IMPORT_PREFIX).
  if grep -rlE '"/usr/(include|lib/x86_64-linux-gnu/lib)' "$deps" --include='*.cmake'; then
    echo "prepare.sh: a CMake package file above names /usr directly" >&2
    exit 1
  fi
  printf '%s' "${packages[*]}" >"$stamp"
  echo "deps: unpacked into $deps"
fi

# --- peer wheels ------------------------------------------------------------------------------
pin() {  # the pinned version of $1 in bench/peer/requirements.txt
  sed -nE "s/^$1==([^[:space:]#]+).*/\\1/p" "$root/bench/peer/requirements.txt"
}
pf_version="$(pin pytorch-forecasting)"
sb_version="$(pin scikit-base)"
if [[ -z "$pf_version" || -z "$sb_version" ]]; then
  echo "prepare.sh: pytorch-forecasting/scikit-base pins not found in bench/peer/requirements.txt" >&2
  exit 1
fi
want=("pytorch_forecasting-$pf_version-py3-none-any.whl" "scikit_base-$sb_version-py3-none-any.whl")
if [[ -f "$wheels/${want[0]}" && -f "$wheels/${want[1]}" ]]; then
  echo "wheels: up to date ($wheels)"
else
  pip=(python3 -m pip)
  if ! python3 -m pip --version >/dev/null 2>&1; then
    pip=("$HOME/.cache/tftrain/venv-peer/bin/pip")
  fi
  rm -rf "$wheels"
  mkdir -p "$wheels"
  # Pure-Python wheels; the device's python is 3.12 (Ubuntu 24.04).
  "${pip[@]}" download --no-deps --only-binary=:all: --python-version 3.12 -d "$wheels" \
    "pytorch-forecasting==$pf_version" "scikit-base==$sb_version"
  for w in "${want[@]}"; do
    [[ -f "$wheels/$w" ]] || { echo "prepare.sh: expected $wheels/$w" >&2; exit 1; }
  done
fi

echo
echo "payload: $(du -sh "$payload" | cut -f1) ($(find "$payload" -type f | wc -l) files) in $payload"
echo "carry:   [\"bench/gpu/payload\"]"
