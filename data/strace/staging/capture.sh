#!/bin/sh
# Recreate data/strace/staging/*.strace from src/ooc_app.c (issue 19: staging I/O).
#
# Usage: sh data/strace/staging/capture.sh [OUTDIR]   (default: this script's folder)
#
# Needs gcc and strace. The program runs in a fixed scratch directory, $WORK
# (default /tmp/iochar-staging), so the paths strace prints with -y are the same on
# every machine; it is emptied first. Each run takes about a second and writes at
# most 34 MiB there (removed by the program, except input.dat and output.dat).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
WORK=${WORK:-/tmp/iochar-staging}
OUT=$(cd "$OUT" && pwd)

rm -rf "$WORK"
mkdir -p "$WORK"
gcc -O1 -Wall -o "$WORK/ooc_app" "$HERE/src/ooc_app.c"
cd "$WORK"
head -c 1048576 /dev/zero > input.dat         # the required input: 1 MiB

# 1. out of core: A (20 MiB) and B (12 MiB) in scratch files, read and written back
#    every iteration; both live in iterations 3-4
strace -f -tt -T -y -s 16 -o "$OUT/ooc.strace" ./ooc_app ooc . > ooc.stdout
# 2. the same computation with the data set in memory: input and output only
strace -f -tt -T -y -s 16 -o "$OUT/incore.strace" ./ooc_app incore . > incore.stdout
cp ooc.stdout incore.stdout "$OUT/"

ls -l "$OUT"/*.strace
