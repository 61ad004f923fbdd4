#!/bin/sh
# Recreate iochar's jittered-cycle strace fixture (data/strace-jitter/*.strace)
# from src/jitter_app.c.
#
# Usage: sh data/strace-jitter/capture.sh [OUTDIR]   (default: this script's directory)
#
# Needs gcc and strace. The traced program runs in $WORK (default
# /tmp/iochar-strace-jitter), emptied first, so that the paths strace prints
# with -y are the same on every machine. The runs take about 6 s each (busy loop).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
WORK=${WORK:-/tmp/iochar-strace-jitter}
OUT=$(cd "$OUT" && pwd)

rm -rf "$WORK"
mkdir -p "$WORK"
gcc -O1 -Wall -o "$WORK/jitter_app" "$HERE/src/jitter_app.c"
cd "$WORK"

# 40 iterations of 150 ms +-15% compute (uniform, seed 7), 4 x 8 KiB writes each
strace -f -tt -T -y -s 16 -o "$OUT/jitter15.strace" \
    ./jitter_app -i 40 -c 150 -j 15 -s 7 . > "$OUT/jitter15.stdout"
cat "$OUT/jitter15.stdout"

# 60 iterations of 100 ms +-25% compute (seed 11)
strace -f -tt -T -y -s 16 -o "$OUT/jitter25.strace" \
    ./jitter_app -i 60 -c 100 -j 25 -s 11 . > "$OUT/jitter25.stdout"
cat "$OUT/jitter25.stdout"
ls -l "$OUT"/jitter*.*
