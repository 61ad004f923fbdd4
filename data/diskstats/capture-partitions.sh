#!/bin/sh
# Recreate data/diskstats/vm-linux6.18-loop-partitions.diskstats, its sysfs truth
# (vm-linux6.18-loop-partitions.sysfs.tsv) and data/iostat/vm-sysstat12.6.1-x-t-p.iostat.
#
# Usage (as root; needs util-linux losetup/addpart/delpart, dd, and sysstat's iostat):
#     sh data/diskstats/capture-partitions.sh [DISKSTATS_DIR] [IOSTAT_DIR]
#
# What it does: a 64 MiB image file on the root disk is attached as a loop
# device with partitions allowed and direct I/O (`losetup -P --direct-io=on`,
# so the loop I/O reaches the disk below), gets two partitions, which the
# kernel names loopNp1 and loopNp2, and while /proc/diskstats is sampled once a
# second, dd writes 16 MiB to loopNp1, reads 8 MiB from loopNp2 and writes
# 24 MiB to a file on the root disk, all with O_DIRECT. The same I/O is then seen three times in
# /proc/diskstats: on the partition, on the loop device and on the disk under
# the image file. The sysfs truth of every block device (is it a partition,
# of which disk, is it under /sys/devices/virtual) is written beside the
# capture. The loop device and the files are removed at the end.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
DS=${1:-$HERE}
IO=${2:-$HERE/../iostat}
WORK=${WORK:-/tmp/iochar-partitions}
rm -rf "$WORK"; mkdir -p "$WORK"
IMG=$WORK/disk.img
head -c $((64 * 1024 * 1024)) /dev/zero > "$IMG"
LOOP=$(losetup -P --direct-io=on -f --show "$IMG")
N=$(basename "$LOOP")
trap 'delpart "$LOOP" 1 2>/dev/null; delpart "$LOOP" 2 2>/dev/null; losetup -d "$LOOP" 2>/dev/null;
      rm -rf "$WORK"' EXIT
# The partitions are added with the BLKPG ioctl (util-linux addpart: start and
# length in 512-byte sectors), the call partx and parted use to tell the kernel
# about partitions; it works without the kernel's partition-table parsers.
addpart "$LOOP" 1 2048 61440        # p1: 30 MiB from 1 MiB
addpart "$LOOP" 2 63488 65536       # p2: 32 MiB from 31 MiB
sleep 0.5
if ! [ -b "${LOOP}p1" ] || ! [ -b "${LOOP}p2" ]; then
    echo "no ${LOOP}p1/p2 block devices: the kernel did not add the partitions" >&2
    exit 1
fi
dd if=/dev/urandom of="${LOOP}p2" bs=1M count=8 oflag=direct 2>/dev/null  # data to read back
sync; sleep 1
LC_ALL=C iostat -x -t -p ALL 1 7 > "$WORK/iostat.out" &
IOSTAT=$!
( for i in 1 2 3 4 5 6 7 8; do date +%s.%N; cat /proc/diskstats; sleep 1; done ) \
    > "$WORK/diskstats.out" &
SAMPLER=$!
sleep 1.5
dd if=/dev/zero of="${LOOP}p1" bs=1M count=16 oflag=direct 2>/dev/null
sleep 1
dd if="${LOOP}p2" of=/dev/null bs=1M count=8 iflag=direct 2>/dev/null
sleep 1
dd if=/dev/zero of="$WORK/plain.bin" bs=1M count=24 oflag=direct 2>/dev/null
wait "$SAMPLER" "$IOSTAT"
# sysfs truth: name, partition number (empty: not a partition), parent disk, virtual (1/0)
{
    printf 'name\tpartition\tparent\tvirtual\n'
    for d in /sys/class/block/*; do
        name=$(basename "$d"); real=$(readlink -f "$d")
        part=$(cat "$d/partition" 2>/dev/null || true)
        parent=""; [ -n "$part" ] && parent=$(basename "$(dirname "$real")")
        # (the bundled .sysfs.tsv was written with /sys/devices/virtual/block/*: the same
        # answer on that VM, where no block device lives elsewhere under /sys/devices/virtual)
        case "$real" in /sys/devices/virtual/*) virt=1 ;; *) virt=0 ;; esac
        printf '%s\t%s\t%s\t%s\n' "$(echo "$name" | tr '!' '/')" "$part" "$parent" "$virt"
    done
} > "$WORK/sysfs.tsv"
cp "$WORK/diskstats.out" "$DS/vm-linux6.18-loop-partitions.diskstats"
cp "$WORK/sysfs.tsv" "$DS/vm-linux6.18-loop-partitions.sysfs.tsv"
cp "$WORK/iostat.out" "$IO/vm-sysstat12.6.1-x-t-p.iostat"
echo "loop device: $N"
