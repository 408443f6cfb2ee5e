#!/bin/sh
# Runs every language's runner on one config and checks that they print the same summary
# (every line but samples_per_second, a timing), above all the same final_validation_loss:
# one library, one seed, so the same numbers.
#
#   compare_runners.sh CONFIG.yaml OUT_DIR C_RUNNER GO_RUNNER CSHARP_EXE RUST_RUNNER PYTHON_SCRIPT
#
# A runner given as "-" (its toolchain is missing) is skipped; at least two must run. The C#
# runner runs under $MONO (default mono); LD_LIBRARY_PATH must let it find
# libtftrain_csharp.so. The Python runner (examples/python/train.py) runs under $PYTHON
# (default python3), which must import tftrain (PYTHONPATH, TFTRAIN_LIBRARY). Each runner
# writes to OUT_DIR/<language>/run.
#
# Data in memory: MEMORY_RUNNERS, a comma-separated list of languages among c, go, csharp, rust
# and python whose runners take --memory (load data.path's CSV with that language's Arrow library
# and train from memory), runs each of them once more as `RUNNER --memory CONFIG ...` into
# OUT_DIR/<language>-memory; its summary must equal the others', the file mode's above all.
# The list is explicit (bindings/CMakeLists.txt sets it from the runners that support the
# flag) rather than probed, so a runner that should take --memory and fails is a failure, not
# a skip. A listed language whose runner is "-" is skipped with it.
set -u
if [ $# -ne 7 ]; then
  echo "usage: $0 CONFIG.yaml OUT_DIR C_RUNNER GO_RUNNER CSHARP_EXE RUST_RUNNER PYTHON_SCRIPT" >&2
  exit 2
fi
config=$1
out=$2
mono=${MONO:-mono}
python=${PYTHON:-python3}
status=0
ran=""

run() {
  name=$1
  shift
  dir=$out/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  if ! "$@" "$config" "output.directory=$dir/run" >"$dir/stdout" 2>"$dir/stderr"; then
    echo "FAIL: the $name runner failed:"
    cat "$dir/stderr"
    status=1
    return
  fi
  grep -v '^samples_per_second:' "$dir/stdout" >"$dir/summary"
  if ! grep -q '^final_validation_loss: ' "$dir/summary"; then
    echo "FAIL: the $name runner printed no final_validation_loss line"
    status=1
    return
  fi
  ran="$ran $name"
}

[ "$3" = "-" ] || run c "$3"
[ "$4" = "-" ] || run go "$4"
[ "$5" = "-" ] || run csharp "$mono" "$5"
[ "$6" = "-" ] || run rust "$6"
[ "$7" = "-" ] || run python "$python" "$7"

for name in $(echo "${MEMORY_RUNNERS:-}" | tr ',' ' '); do
  case "$name" in
    c) [ "$3" = "-" ] || run c-memory "$3" --memory ;;
    go) [ "$4" = "-" ] || run go-memory "$4" --memory ;;
    csharp) [ "$5" = "-" ] || run csharp-memory "$mono" "$5" --memory ;;
    rust) [ "$6" = "-" ] || run rust-memory "$6" --memory ;;
    python) [ "$7" = "-" ] || run python-memory "$python" "$7" --memory ;;
    *)
      echo "FAIL: MEMORY_RUNNERS names '$name' (c, go, csharp, rust or python)"
      status=1
      ;;
  esac
done

set -- $ran
if [ $# -lt 2 ]; then
  echo "FAIL: fewer than two runners ran ($ran)"
  exit 1
fi
reference=$1
for name in $ran; do
  printf '%-14s %s\n' "$name" "$(grep '^final_validation_loss: ' "$out/$name/summary")"
done
for name in $ran; do
  [ "$name" = "$reference" ] && continue
  if ! diff -u "$out/$reference/summary" "$out/$name/summary"; then
    echo "FAIL: the $name runner's summary differs from the $reference runner's"
    status=1
  fi
done
[ $status -eq 0 ] && echo "OK: $# runners agree:$ran"
exit $status
