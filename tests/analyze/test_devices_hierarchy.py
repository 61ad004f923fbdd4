"""Whole disks, partitions and virtual devices in device counters (issue 17, item 4).

The truth comes from outside the code under test:

- sysfs, the kernel's own answer: the ``.sysfs.tsv`` recorded with the capture
  ``data/diskstats/vm-linux6.18-loop-partitions.diskstats`` (a loop device with two
  partitions on a virtio disk, see ``data/diskstats/SOURCE.md``) and, when the test
  runs on Linux, ``/sys/class/block`` of this machine;
- the fixed major numbers of ``Documentation/admin-guide/devices.txt`` (7 loop,
  8 SCSI disk with 16 minors per disk, 11 SCSI CD-ROM) read from a real
  ``/proc/diskstats`` file;
- byte totals parsed here from the raw ``/proc/diskstats`` and ``iostat -x -p ALL``
  text, summed over whole disks only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iochar.analyze import blockdev, devices
from iochar.errors import ParameterError
from iochar.narrate import system
from tests.conftest import DATA_DIR

CAPTURE = DATA_DIR / "diskstats" / "vm-linux6.18-loop-partitions.diskstats"
SYSFS = DATA_DIR / "diskstats" / "vm-linux6.18-loop-partitions.sysfs.tsv"
IOSTAT_P = DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t-p.iostat"
JC = DATA_DIR / "diskstats" / "jc-linux-proc.snapshot"
NODE = DATA_DIR / "diskstats" / "node_exporter-proc-diskstats.snapshot"
UDEV = DATA_DIR / "diskstats" / "node_exporter-udev.ttar"
THREE = DATA_DIR / "diskstats" / "vm-linux6.18-3dev.diskstats"

#: Documentation/admin-guide/devices.txt: fixed block majors (1 RAM disk, 2 floppy,
#: 7 loop, 8 SCSI disk with 16 minors per disk, 11 SCSI CD-ROM).
RAM_MAJOR, FD_MAJOR, LOOP_MAJOR, SD_MAJOR, SR_MAJOR = 1, 2, 7, 8, 11


# --------------------------------------------------------------------------- raw parsers


def _diskstats(path: Path) -> list[tuple[float, dict[str, list[int]]]]:
    """(epoch seconds, {name: [major, minor, counters...]}) per timestamped snapshot."""
    snaps: list[tuple[float, dict[str, list[int]]]] = []
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 1:
            snaps.append((float(f[0]), {}))
        elif f:
            snaps[-1][1][f[2]] = [int(f[0]), int(f[1])] + [int(x) for x in f[3:]]
    return snaps


def _disk_bytes(snaps, names) -> np.ndarray:
    """Bytes read + written per interval, summed over ``names`` (sectors are 512 B)."""
    out = []
    for (_, a), (_, b) in zip(snaps, snaps[1:], strict=False):
        # fields after major, minor: reads, merged, sectors read (4), ..., sectors written (8)
        out.append(sum((b[n][4] - a[n][4] + b[n][8] - a[n][8]) * 512 for n in names))
    return np.array(out, dtype=float)


def _iostat_rates(path: Path) -> list[dict[str, float]]:
    """Per report after the first (since boot): {device: (rkB/s + wkB/s) x 1024} [bytes/s]."""
    reports: list[dict[str, float]] = []
    cols: list[str] = []
    for line in path.read_text().splitlines():
        if re.fullmatch(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d", line.strip()):
            reports.append({})
        elif line.startswith("Device"):
            cols = line.split()
        elif cols and line.strip() and not line.startswith(("avg-cpu", " ")):
            f = line.split()
            row = dict(zip(cols, f, strict=True))
            reports[-1][f[0]] = (float(row["rkB/s"]) + float(row["wkB/s"])) * 1024
        elif not line.strip():
            cols = []
    return reports[1:]


def _sysfs_truth() -> pd.DataFrame:
    t = pd.read_csv(SYSFS, sep="\t", dtype=str, keep_default_na=False)
    t["kind"] = np.where(
        t["partition"] != "", "partition", np.where(t["virtual"] == "1", "virtual", "disk")
    )
    return t


# --------------------------------------------------------------------------- the names


def test_names_match_the_sysfs_recorded_with_the_capture():
    snaps = _diskstats(CAPTURE)
    names = list(snaps[-1][1])
    truth = _sysfs_truth().set_index("name")
    assert sorted(names) == sorted(truth.index)  # every device of the capture has its truth
    got = blockdev.device_table(names).set_index("target")
    assert (got["device"] == truth.loc[got.index, "kind"]).all()
    part = truth[truth["kind"] == "partition"]
    assert len(part) == 2
    assert (got.loc[part.index, "parent"] == part["parent"]).all()  # loop0p1, loop0p2 -> loop0
    assert (got["virtual"] == (truth.loc[got.index, "virtual"] == "1")).all()


@pytest.mark.skipif(not Path("/sys/class/block").is_dir(), reason="no sysfs block class here")
def test_names_match_this_machines_sysfs():
    names = [p.name.replace("!", "/") for p in Path("/sys/class/block").iterdir()]
    if not names:
        pytest.skip("sysfs lists no block device on this machine")
    for n in names:
        truth = blockdev.sysfs_class(n)
        assert truth is not None
        assert blockdev.device_class(n, names) == truth, n


def test_partitions_map_to_their_disk_by_major_and_minor():
    # jc's real /proc/diskstats: loop0-8, sda with sda1-3, sr0 and dm-0; no timestamp
    rows = [line.split() for line in JC.read_text().splitlines() if line.strip()]
    names = [r[2] for r in rows]
    by_dev = {(int(r[0]), int(r[1])): r[2] for r in rows}
    got = blockdev.device_table(names).set_index("target")
    checked = 0
    for r in rows:
        major, minor, name = int(r[0]), int(r[1]), r[2]
        if major == SD_MAJOR:  # 16 minors per SCSI disk: minor % 16 is the partition
            if minor % 16:
                assert got.at[name, "device"] == "partition"
                assert got.at[name, "parent"] == by_dev[(SD_MAJOR, minor - minor % 16)]
            else:
                assert got.at[name, "device"] == "disk"
            checked += 1
        elif major == LOOP_MAJOR:
            assert got.at[name, "device"] == "virtual" and got.at[name, "virtual"]
            checked += 1
        elif major == SR_MAJOR:
            assert got.at[name, "device"] == "disk"
            checked += 1
    assert checked == len(rows) - 1  # all but dm-0, whose major is dynamic
    assert got.at["dm-0", "device"] == "virtual"
    assert blockdev.select_targets(names) == ["sda", "sr0"]


def _udev(path: Path) -> dict[tuple[int, int], dict[str, str]]:
    """udev's E: properties per block device (major, minor) from a ttar of /run/udev/data."""
    out: dict[tuple[int, int], dict[str, str]] = {}
    cur = None
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"Path: udev/data/b(\d+):(\d+)", line)
        if m:
            cur = out.setdefault((int(m.group(1)), int(m.group(2))), {})
        elif cur is not None and line.startswith("E:") and "=" in line:
            k, v = line[2:].split("=", 1)
            cur[k] = v
    return out


def test_partitions_and_virtual_devices_by_udev_and_major_numbers():
    # node_exporter's real /proc/diskstats lines and udev database of the same devices
    rows = [line.split()[:3] for line in NODE.read_text().splitlines() if line.strip()]
    names = [r[2] for r in rows]
    udev = _udev(UDEV)
    got = blockdev.device_table(names).set_index("target")
    checked, disks = set(), []
    disk_at: dict[tuple[int, int], str] = {}  # the disk listed last under a major:minor
    for major, minor, name in ((int(a), int(b), c) for a, b, c in rows):
        props = udev.get((major, minor), {})
        if "DM_NAME" in props:  # udev names every device-mapper device
            assert got.at[name, "device"] == "virtual", name
        elif "ID_PART_ENTRY_DISK" in props:  # udev: partition of the disk major:minor
            pmaj, pmin = map(int, props["ID_PART_ENTRY_DISK"].split(":"))
            assert got.at[name, "device"] == "partition"
            assert got.at[name, "parent"] == disk_at[(pmaj, pmin)], name
        elif major == SD_MAJOR and minor % 16:  # the kernel lists a partition after its disk
            assert got.at[name, "device"] == "partition"
            assert got.at[name, "parent"] == disk_at[(SD_MAJOR, minor - minor % 16)], name
        elif major in (RAM_MAJOR, LOOP_MAJOR):
            assert got.at[name, "device"] == "virtual", name
        elif major in (FD_MAJOR, SD_MAJOR, SR_MAJOR) or (major, minor) in udev:
            assert got.at[name, "device"] == "disk", name  # a udev disk entry: mmcblk0, vda...
        else:
            continue
        checked.add(name)
        if got.at[name, "device"] != "partition":
            disk_at[(major, minor)] = name
        if got.at[name, "device"] == "disk":
            disks.append(name)
    # all but the partitions of vda and nvme0n1 (dynamic majors, no udev entry)
    assert set(names) - checked == {"vda1", "vda2", "nvme0n1p1", "nvme0n1p2"}
    assert got.loc[["vda1", "vda2", "nvme0n1p1", "nvme0n1p2"], "parent"].tolist() == [
        "vda",
        "vda",
        "nvme0n1",
        "nvme0n1",
    ]
    # the default keeps the whole disks only (the unchecked nvme0n1p*, vda* are partitions)
    assert blockdev.select_targets(names) == sorted(disks)
    assert len(disks) == 8


@pytest.mark.parametrize(
    "name",
    ["jc-centos-7.7-iostat-x.out", "jc-ubuntu-18.04-iostat-x.out", "jc-ubuntu-20.10-iostat-x.out"],
)
def test_real_iostat_device_names(name):
    # real iostat reports of three machines: sda beside dm-N, loopN, fd0, scd0/sr0
    text = (DATA_DIR / "iostat" / name).read_text().splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("Device"))
    names = [line.split()[0] for line in text[start + 1 :] if line.strip()]
    t = blockdev.device_table(names).set_index("target")
    for n in names:
        kind = t.at[n, "device"]
        if n.startswith(("dm-", "loop")):
            assert kind == "virtual"
        else:  # sda, fd0 (floppy, major 2), scd0 / sr0 (SCSI CD-ROM, major 11)
            assert kind == "disk"
    assert blockdev.select_targets(names) == sorted(n for n in names if t.at[n, "device"] == "disk")


def test_devices_parameter_is_checked(store):
    store.load(THREE)
    with pytest.raises(ParameterError, match="'devices' parameter of counter_load"):
        devices.counter_load(store, devices="whole")
    with pytest.raises(ParameterError, match="'devices' parameter of rates"):
        devices.rates(store, 1, devices=["disk", "lun"])
    assert blockdev.check_devices(("partition", "disk"), "x") == ("disk", "partition")


# --------------------------------------------------------------------------- the totals


@pytest.fixture
def nested(store):
    """The loop-partition capture as /proc/diskstats and as iostat -x -p ALL."""
    store.load(CAPTURE)
    store.load(IOSTAT_P)
    return store


def _sid(store, name):
    return int(
        store.sql(
            "SELECT source_id FROM sources WHERE uri LIKE $u", params={"u": f"%{name}"}
        ).fetchall()[0][0]
    )


def test_diskstats_total_is_the_whole_disks_only(nested):
    snaps = _diskstats(CAPTURE)
    sid = _sid(nested, CAPTURE.name)
    names = list(snaps[-1][1])
    disk = _disk_bytes(snaps, ["vda"])
    every = _disk_bytes(snaps, names)
    assert every.sum() > 1.9 * disk.sum() > 0  # the loop I/O is counted on vda again

    view = devices.burst_view(nested, sid)
    assert view.targets == ("vda",)
    assert view.rates["amount"].sum() == pytest.approx(disk.sum())
    dt = np.diff([t for t, _ in snaps])
    assert view.series.to_numpy(float) == pytest.approx(disk / dt, rel=1e-6)

    load = devices.counter_load(nested)
    row = load[load["source_id"] == sid]
    assert row["target"].tolist() == ["vda"] and row["device"].tolist() == ["disk"]
    assert row["mib"].iloc[0] * (1 << 20) == pytest.approx(disk.sum())

    # on request: every device, or the partitions alone, with their disk named
    everything = devices.burst_view(nested, sid, devices="all")
    assert everything.rates["amount"].sum() == pytest.approx(every.sum())
    parts = devices.counter_load(nested, devices="partitions")
    parts = parts[parts["source_id"] == sid]
    assert parts["target"].tolist() == ["loop0p1", "loop0p2"]
    assert parts["parent"].tolist() == ["loop0", "loop0"]
    p_bytes = _disk_bytes(snaps, ["loop0p1", "loop0p2"]).sum()
    assert parts["mib"].sum() * (1 << 20) == pytest.approx(p_bytes)
    virt = devices.counter_load(nested, devices="virtual")
    truth = _sysfs_truth()
    assert virt.loc[virt["source_id"] == sid, "target"].tolist() == sorted(
        truth.loc[truth["kind"] == "virtual", "name"]
    )


def test_iostat_total_is_the_whole_disks_only(nested):
    sid = _sid(nested, IOSTAT_P.name)
    raw = _iostat_rates(IOSTAT_P)
    assert {"loop0", "loop0p1", "loop0p2", "vda", "zram0"} <= set(raw[0])
    disk = np.array([r["vda"] for r in raw])
    every = np.array([sum(r.values()) for r in raw])
    assert every.sum() > 1.9 * disk.sum() > 0
    view = devices.burst_view(nested, sid)
    assert view.targets == ("vda",)
    assert view.series.to_numpy(float) == pytest.approx(disk, rel=1e-6, abs=1.0)
    allv = devices.burst_view(nested, sid, devices="all")
    assert allv.series.to_numpy(float) == pytest.approx(every, rel=1e-6, abs=1.0)


def test_inputs_count_the_selected_targets(nested):
    t = devices.inputs(nested).set_index("source_id")
    sid = _sid(nested, CAPTURE.name)
    names = list(_diskstats(CAPTURE)[-1][1])
    assert t.at[sid, "targets"] == 1 and t.at[sid, "all_targets"] == len(names)
    every = devices.inputs(nested, devices="all").set_index("source_id")
    assert every.at[sid, "targets"] == len(names)
    m = devices.device_map(nested, source_id=sid).set_index("target")
    assert m.index.tolist() == sorted(names)
    assert m.loc[m["in_default"]].index.tolist() == ["vda"]
    truth = _sysfs_truth().set_index("name")
    assert (m["device"] == truth.loc[m.index, "kind"]).all()


def test_named_targets_are_taken_whatever_their_kind(nested):
    sid = _sid(nested, CAPTURE.name)
    one = devices.counter_load(nested, targets=["loop0p1"])
    assert one.loc[one["source_id"] == sid, "device"].tolist() == ["partition"]
    both = devices.counter_load(nested, targets=["loop0p1", "vda"], devices="disks")
    assert both.loc[both["source_id"] == sid, "target"].tolist() == ["vda"]


# --------------------------------------------------------------------------- the headlines


def test_idle_loop_devices_never_headline(nested):
    load = devices.counter_load(nested)
    assert load["target"].tolist() == ["vda", "vda"]  # one disk in each of the two inputs
    text = system.device_load(load)
    assert "The highest peak is **vda**" in text
    assert not re.search(r"\b(loop|zram)\d", text)  # no device of them named (file names may)
    view = devices.burst_view(nested, load=load)
    summary = system.burst_view_summary(load, view)
    assert "1 target (vda)" in summary and not re.search(r"\b(loop|zram)\d", summary)
    # even with every device, an idle one is never the busiest
    every = devices.counter_load(nested, devices="all")
    assert "The highest peak is **vda**" in system.device_load(every)
    # burst_view sums the kinds its `load` was made with
    assert "loop0p1" in devices.burst_view(nested, load=every).targets


def test_a_machine_whose_loop_and_zram_devices_are_idle(store):
    # vda, zram0 and loop0 sampled during dd: the default never names loop0 or zram0
    store.load(THREE)
    load = devices.counter_load(store)
    assert load["target"].tolist() == ["vda"]
    snaps = _diskstats(THREE)
    assert load["mib"].iloc[0] * (1 << 20) == pytest.approx(_disk_bytes(snaps, ["vda"]).sum())


# --------------------------------------------------------------------------- live capture


@pytest.mark.skipif(not os.path.exists("/proc/diskstats"), reason="no /proc/diskstats")
def test_live_diskstats_total_is_the_whole_disks(store, tmp_path):
    out = tmp_path / "live.diskstats"
    loop = "for i in 1 2; do date +%s.%N; cat /proc/diskstats; sleep 1; done"
    out.write_text(subprocess.run(["sh", "-c", loop], capture_output=True, text=True).stdout)
    snaps = _diskstats(out)
    names = list(snaps[-1][1])
    disks = blockdev.select_targets(names)
    if not disks:
        pytest.skip("this machine lists no whole disk in /proc/diskstats")
    store.load(out)
    load = devices.counter_load(store)
    assert sorted(load["target"]) == disks
    assert load["mib"].sum() * (1 << 20) == pytest.approx(_disk_bytes(snaps, disks).sum())
    everything = devices.counter_load(store, devices="all")
    assert sorted(everything["target"]) == sorted(names)


@pytest.mark.skipif(shutil.which("iostat") is None, reason="sysstat iostat is not installed")
def test_live_iostat_selects_whole_disks(store, tmp_path):
    out = tmp_path / "live.iostat"
    run = subprocess.run(
        ["iostat", "-x", "-t", "-p", "ALL", "1", "2"],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
    )
    out.write_text(run.stdout)
    names = list(_iostat_rates(out)[0])
    disks = blockdev.select_targets(names)
    if not disks:
        pytest.skip("this machine lists no whole disk")
    store.load(out)
    load = devices.counter_load(store)
    assert sorted(load["target"]) == disks
    assert set(devices.counter_load(store, devices="all")["target"]) == set(names)
