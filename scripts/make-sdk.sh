#!/usr/bin/env bash
# Makes the SDK archive a host links without building tftrain:
#
#   scripts/make-sdk.sh [BUILD_DIR [OUT_DIR]]   (defaults: build, dist)
#
# OUT_DIR receives tftrain-<version>-linux-x86_64.tar.gz. BUILD_DIR must hold a built
# libtftrain (scripts/test.sh or scripts/run-example.sh builds one); the C# part needs mono's
# mcs and a C compiler (scripts/setup-deps.sh installs both for the tests). Inside:
#
#   include/     tftrain.h, tftrain_version.h
#   lib/         libtftrain.so.0 and every library it loads that a plain Debian or Ubuntu lacks
#                (LibTorch's, Arrow's, yaml-cpp, OpenSSL's libcrypto), each finding the others
#                through RUNPATH $ORIGIN; TfTrain.dll and libtftrain_csharp.so (C#);
#                pkgconfig/tftrain.pc and cmake/tftrain/ (find_package), both relocatable
#   go/          the Go module "tftrain", linking through pkg-config
#   rust/        the tftrain-sys and tftrain crates, linking through pkg-config
#   examples/    each language's runner, set up against the folders above, and the configs
#   SHA256SUMS   of every other file
#
# CPU only. LibTorch comes from the PyPI wheel the build used, whose libtorch_cpu also loads
# CUDA's runtime and profiler libraries (libcudart, libcupti: 7 MiB, bundled; no GPU or driver
# needed). A CUDA build of libtftrain would need the wheel's CUDA libraries too (about 3 GiB), so
# CUDA users build from source (README.md, "GPU").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$(cd "${1:-build}" && pwd)
mkdir -p "${2:-dist}"
out=$(cd "${2:-dist}" && pwd)

library="$build/lib/libtftrain.so.0"
[ -f "$library" ] || { echo "make-sdk: $library: not built (scripts/test.sh builds it)" >&2; exit 1; }
version=$(sed -n 's/^#define TFTRAIN_VERSION_STRING "\(.*\)"$/\1/p' \
  "$build/capi/include/tftrain_version.h")
name="tftrain-$version-linux-x86_64"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sdk="$work/$name"

# The C library, its headers, pkg-config and CMake files, as `cmake --install` lays them out.
cmake --install "$build" --prefix "$sdk" >/dev/null
set_runpath() {  # FILE: its RUNPATH becomes $ORIGIN (CMake edits the ELF in place)
  cmake -DFILE="$1" -P "$root/scripts/sdk/set-runpath.cmake"
}
set_runpath "$sdk/lib/libtftrain.so.$version"

# What it loads, less the C and C++ runtimes every Linux has (manylinux's rule).
is_system_library() {
  case "$1" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libutil.so.* | \
      ld-linux*.so.* | libstdc++.so.* | libgcc_s.so.*) return 0 ;;
  esac
  return 1
}
ldd "$library" | while read -r soname arrow path _; do
  [ "$arrow" = "=>" ] || continue
  is_system_library "$soname" && continue
  if [ ! -f "$path" ]; then
    echo "make-sdk: $library needs $soname, which is not found" >&2
    exit 1
  fi
  cp -L "$path" "$sdk/lib/$soname"
done
chmod u+w "$sdk"/lib/*.so*

# C#: the SWIG wrapper and TfTrain.dll, built against the SDK's own library.
sh "$root/bindings/csharp/build.sh" "$work/csharp" "$sdk/lib" "$sdk/include" >/dev/null
cp "$work/csharp/TfTrain.dll" "$work/csharp/libtftrain_csharp.so" "$sdk/lib/"
set_runpath "$sdk/lib/libtftrain_csharp.so"

# Go and Rust: the bindings' sources (not their tests), and the runners with their configs.
copy_tracked() {  # PATHSPEC...: the tracked files there, into the SDK at the same paths
  git ls-files -z -- "$@" ':!:*_test.go' ':!:bindings/rust/*/tests/*' |
    tar --null -T - -cf - | tar -xf - -C "$sdk"
}
copy_tracked bindings/go bindings/rust examples/c examples/go examples/rust examples/csharp \
  examples/configs examples/data
mv "$sdk/bindings/go" "$sdk/bindings/rust" "$sdk/"
rmdir "$sdk/bindings"
# The repository's build/ paths become pkg-config (PKG_CONFIG_PATH=<sdk>/lib/pkgconfig).
sed -i -e '/^#cgo LDFLAGS: .*build\/lib/d' \
  -e 's|^#cgo CFLAGS: .*build/capi/include$|#cgo pkg-config: tftrain|' \
  "$sdk"/go/*.go "$sdk"/go/internal/swig/*.go
sed -i 's#=> ../../bindings/go#=> ../../go#' "$sdk/examples/go/go.mod"
sed -i 's#path = "../../bindings/rust/tftrain"#path = "../../rust/tftrain"#' \
  "$sdk/examples/rust/Cargo.toml"
cp "$root/scripts/sdk/c-CMakeLists.txt" "$sdk/examples/c/CMakeLists.txt"
cp "$root/scripts/sdk/README.md" "$sdk/README.md"

(cd "$sdk" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort |
  xargs sha256sum >SHA256SUMS)
tar -C "$work" -czf "$out/$name.tar.gz" "$name"
echo "make-sdk: $out/$name.tar.gz ($(du -m "$out/$name.tar.gz" | cut -f1) MiB," \
  "$(du -sm "$sdk" | cut -f1) MiB unpacked)" >&2
echo "$out/$name.tar.gz"
