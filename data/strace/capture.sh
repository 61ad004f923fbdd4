#!/bin/sh
# Recreate iochar's strace fixtures (data/strace/*.strace) from src/ckpt_app.c.
#
# Usage: sh data/strace/capture.sh [OUTDIR]      (default: the directory of this script)
#
# Needs gcc and strace (the fixtures were made with strace 6.1, gcc 12.2 on
# Debian 12). The traced program runs in a fixed scratch directory,
# $WORK (default /tmp/iochar-strace), so the paths strace prints with -y are
# the same on every machine; it is emptied first. The single-process runs take
# ~12 s each (busy loop), so the fixtures show several time-based checkpoints.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
WORK=${WORK:-/tmp/iochar-strace}
OUT=$(cd "$OUT" && pwd)

rm -rf "$WORK"
mkdir -p "$WORK"
gcc -O1 -Wall -o "$WORK/ckpt_app" "$HERE/src/ckpt_app.c"
cd "$WORK"
head -c 300000 /dev/zero > input.dat          # the required input: 300000 bytes

fresh() { rm -f ckpt.* worker.*.dat output.dat scratch.dat stdout.txt; }

# 1. single process, -tt: 40 iterations of 300 ms compute, a checkpoint every 2 s
fresh
strace -f -tt -T -y -s 16 -o "$OUT/ckpt_tt.strace" \
    ./ckpt_app -i 40 -c 300 -k 2 input.dat . > stdout.txt
cat stdout.txt

# 2. the same run with -ttt (epoch timestamps)
fresh
strace -f -ttt -T -y -s 16 -o "$OUT/ckpt_ttt.strace" \
    ./ckpt_app -i 40 -c 300 -k 2 input.dat . > stdout.txt
cat stdout.txt

# 3. a parent and 3 concurrent writer processes, -o: lines start with a bare pid
fresh
strace -f -tt -T -y -s 16 -o "$OUT/workers_o.strace" \
    ./ckpt_app -w 3 -i 8 input.dat . > stdout.txt
cat stdout.txt

# 4. the same to stderr (no -o): "[pid  N] " prefixes once there are several
#    processes, none while there is one, and strace's own "Process N attached"
#    messages mixed in (sometimes in the middle of a line)
fresh
strace -f -tt -T -y -s 16 ./ckpt_app -w 3 -i 8 input.dat . \
    > stdout.txt 2> "$OUT/workers_stderr.strace"
cat stdout.txt

# 5. plain -tt only: no -f pids, no -T durations, no -y fd paths
fresh
strace -tt -s 16 -o "$OUT/ckpt_plain.strace" \
    ./ckpt_app -i 5 -c 50 -k 0 input.dat . > stdout.txt
cat stdout.txt

# 6. -r (seconds since the previous line) and -ttt on the same lines: the loader reads
#    -r alone, and the -ttt times of the same run say what it must find
fresh
strace -f -r -ttt -T -y -s 16 -o "$OUT/ckpt_r_ttt.strace" \
    ./ckpt_app -i 5 -c 50 -k 0 input.dat . > stdout.txt
cat stdout.txt

ls -l "$OUT"/*.strace
