#!/bin/sh
# Recreate data/insights/{collide,apart}.{strace,diskstats}: a checkpointing program
# traced with strace -ttt (dated) while /proc/diskstats of its disk is sampled, and a
# second process loads the same disk with direct writes -- during the traced run
# (collide) or before it (apart). The insight CYCLES-COLLIDE-1 matches the job's I/O
# bursts against the disk's busy periods (iochar.analyze.insights.rules_system).
#
# Usage: sh data/insights/capture.sh [OUTDIR] [DISK]
#   OUTDIR default: the directory of this script; DISK default: vda (the disk
#   holding $WORK). Needs gcc and strace. Writes at most 2 x 64 MiB to
#   $WORK/load.{1,2}.bin (overwritten in place, removed at the end).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(cd "${1:-$HERE}" && pwd)
DISK=${2:-vda}
WORK=${WORK:-/tmp/iochar-insights}
rm -rf "$WORK"
mkdir -p "$WORK"
gcc -O1 -Wall -o "$WORK/ckpt_app" "$HERE/../strace/src/ckpt_app.c"
cd "$WORK"
head -c 300000 /dev/zero > input.dat

sample() {  # $1 diskstats samples one second apart, to $2
    i=0
    while [ "$i" -lt "$1" ]; do
        date +%s.%N
        grep -E " $DISK " /proc/diskstats
        sleep 1
        i=$((i + 1))
    done > "$2"
}

writer() {  # direct 4 MiB writes of a 64 MiB file $2 until second $1 of the epoch
    while [ "$(date +%s)" -lt "$1" ]; do
        dd if=/dev/zero of="$2" bs=4M count=16 oflag=direct conv=notrunc status=none
    done
}

load() {  # two writers for $1 seconds
    end=$(( $(date +%s) + $1 ))
    writer "$end" load.1.bin &
    w=$!
    writer "$end" load.2.bin
    wait "$w"
}

run() {  # the traced program: 40 iterations of 300 ms, a checkpoint every 2 s
    rm -f ckpt.* output.dat scratch.dat
    strace -f -ttt -T -y -s 16 -o "$1" ./ckpt_app -i 40 -c 300 -k 2 input.dat . > stdout.txt
}

# 1. collide: the load runs through the traced run
sample 18 "$OUT/collide.diskstats" &
S=$!
sleep 2
load 14 &
L=$!
sleep 1
run "$OUT/collide.strace"
wait "$L"
wait "$S"

# 2. apart: the load runs first, the traced run after it, on an otherwise quiet disk
sample 26 "$OUT/apart.diskstats" &
S=$!
sleep 2
load 8
sleep 2
run "$OUT/apart.strace"
wait "$S"

rm -f load.1.bin load.2.bin
