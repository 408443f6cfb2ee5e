#!/usr/bin/env bash
# tft-train on an output folder that turns read-only, then full: each is an error naming the
# file it could not write, the exit code is 1, and the previous model and snapshot are left
# byte for byte as they were, with no temporary file left behind.
#
# The file system is a 4 MiB tmpfs mounted in a private user and mount namespace (unshare -rm),
# so the test needs no root and touches nothing outside. Skipped (77) where the kernel or the
# container forbids unprivileged namespaces.
#
#   test_output_faults.sh TFT_TRAIN CONFIG.yaml
set -euo pipefail
tft_train="$1"
config="$2"

if ! unshare -rm true 2>/dev/null; then
  echo "skipped: unshare -rm (unprivileged user and mount namespaces) is not allowed here"
  exit 77
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TFT_TRAIN="$tft_train" CONFIG="$config" SCRATCH="$scratch"

unshare -rm bash -euo pipefail -c '
mnt="$SCRATCH/mnt"
out="$mnt/run"
mkdir -p "$mnt"
mount -t tmpfs -o size=4m tmpfs "$mnt"

# What must survive: the model folder and the snapshot.
fingerprint() { (cd "$out" && find model snapshots -type f | sort | xargs sha256sum); }
# Runs tft-train expecting failure: exit 1, and a last line "tft-train: ..." naming a file under
# $out and containing the reason $1.
expect_failure() {
  local reason="$1"; shift
  local status=0
  "$TFT_TRAIN" --config "$CONFIG" --output "$out" "$@" >"$SCRATCH/out.txt" 2>"$SCRATCH/err.txt" \
    || status=$?
  if [ "$status" -ne 1 ]; then
    echo "FAIL: expected exit 1, got $status"; cat "$SCRATCH/err.txt"; exit 1
  fi
  # The last line of stderr is the error (progress and the data summary come before it).
  if ! tail -n 1 "$SCRATCH/err.txt" | grep -q "^tft-train: .*$out/.*$reason"; then
    echo "FAIL: expected a last line naming a file under $out and \"$reason\", got:"
    cat "$SCRATCH/err.txt"; exit 1
  fi
  echo "ok: $(tail -n 1 "$SCRATCH/err.txt")"
}

"$TFT_TRAIN" --config "$CONFIG" --output "$out" --epochs 1 >/dev/null 2>"$SCRATCH/err.txt" || {
  echo "FAIL: the first run failed:"; cat "$SCRATCH/err.txt"; exit 1; }
before=$(fingerprint)

mount -o remount,ro "$mnt"
expect_failure "Read-only file system" --epochs 2 --resume
[ "$(fingerprint)" = "$before" ] || { echo "FAIL: read-only: files changed"; exit 1; }

mount -o remount,rw "$mnt"
dd if=/dev/zero of="$mnt/filler" bs=64k >/dev/null 2>&1 || true  # until the disk is full
expect_failure "No space left on device" --epochs 2 --resume
[ "$(fingerprint)" = "$before" ] || { echo "FAIL: full: files changed"; exit 1; }
if find "$out" -name "*.tmp-*" | grep -q .; then
  echo "FAIL: temporaries left behind:"; find "$out" -name "*.tmp-*"; exit 1
fi

# With room again the run resumes and finishes.
rm "$mnt/filler"
"$TFT_TRAIN" --config "$CONFIG" --output "$out" --epochs 2 --resume >"$SCRATCH/out.txt" \
  2>"$SCRATCH/err.txt" || { echo "FAIL: the resumed run failed:"; cat "$SCRATCH/err.txt"; exit 1; }
grep -q "resumed after epoch 1" "$SCRATCH/out.txt" || { echo "FAIL: did not resume"; exit 1; }
echo "ok: resumed after epoch 1 and finished"
'
