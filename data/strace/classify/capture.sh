#!/bin/sh
# Recreate data/strace/classify/*.strace from src/patterns.c (issue 17 item 6).
#
# Usage: sh data/strace/classify/capture.sh [OUTDIR]   (default: this script's folder)
#
# Needs gcc and strace. The program runs in a fixed scratch directory, $WORK
# (default /tmp/iochar-classify), so the paths strace prints with -y are the same
# on every machine; it is emptied first. run takes ~1.6 s, restart ~1.2 s,
# threads a few ms.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
WORK=${WORK:-/tmp/iochar-classify}
OUT=$(cd "$OUT" && pwd)

rm -rf "$WORK"
mkdir -p "$WORK"
gcc -O1 -Wall -pthread -o "$WORK/patterns" "$HERE/src/patterns.c"
cd "$WORK"
head -c 100000 /dev/zero > input.dat          # the required input: 100000 bytes

# 1. a run: input read twice, log appended, output streamed, 3 checkpoint rewrites,
#    /dev/null, /proc, /sys, pipe, socketpair, eventfd, an mmap'ed file, long final output
strace -f -tt -T -y -s 16 -o "$OUT/run.strace" ./patterns run .
# 2. its restart: state.ckpt read back, then rewritten twice
strace -f -tt -T -y -s 16 -o "$OUT/restart.strace" ./patterns restart .
# 3. a short run of 4 threads rewriting status files 2 ms apart
strace -f -tt -T -y -s 16 -o "$OUT/threads.strace" ./patterns threads .

ls -l "$OUT"/*.strace
