#!/bin/sh
# Recreate the fixtures of bytes that move without read/write and of metadata
# calls: cp.strace (GNU cp copies with copy_file_range) and atomic_ckpt.strace
# (src/atomic_ckpt.c: mmap, write-temp-then-rename checkpoints, fallocate,
# sendfile, copy_file_range with explicit offsets, ftruncate, unlink, renameat).
#
# Usage: sh data/strace/capture_transfers.sh [OUTDIR]   (default: data/strace/transfers)
#
# The same strace flags as capture.sh (-f -tt -T -y -s 16 -o), run in the same
# fixed scratch directory $WORK (default /tmp/iochar-strace), emptied first, so
# the paths -y prints are the same on every machine.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/transfers}
WORK=${WORK:-/tmp/iochar-strace}
OUT=$(cd "$OUT" && pwd)

rm -rf "$WORK"
mkdir -p "$WORK"
gcc -O1 -Wall -o "$WORK/atomic_ckpt" "$HERE/src/atomic_ckpt.c"
cd "$WORK"
head -c 300000 /dev/zero > input.dat          # 300000 bytes

# 1. GNU cp (coreutils >= 9 copies a regular file with copy_file_range)
cp --version | head -n 1
strace -f -tt -T -y -s 16 -o "$OUT/cp.strace" cp input.dat copy.dat
cmp input.dat copy.dat

# 2. write-temp-then-rename checkpoints and in-kernel copies (see src/atomic_ckpt.c)
strace -f -tt -T -y -s 16 -o "$OUT/atomic_ckpt.strace" ./atomic_ckpt input.dat 4 > stdout.txt
cat stdout.txt
ls -l "$WORK"
ls -l "$OUT/cp.strace" "$OUT/atomic_ckpt.strace"
