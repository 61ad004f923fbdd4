"""Which Linux block devices are whole disks, partitions or virtual devices.

``/proc/diskstats`` and ``iostat`` list every block device the kernel has: whole
disks, their partitions, and virtual devices built on other devices, files,
memory or the network (device-mapper ``dm-N``, software RAID ``mdN``, ``loopN``,
``zramN``...). One write to a file system on LVM on ``sda2`` is counted on
``dm-0``, on ``sda2`` *and* on ``sda``, so a sum over every device counts the
same bytes two or three times. This module is the one place that says what a
device name is; every device total in :mod:`iochar.analyze.devices` selects its
targets through :func:`select_targets`, by default the whole physical disks.

Rules (from the kernel's naming; the result matches sysfs, see :func:`sysfs_class`)
-------------------------------------------------------------------------------------
- **Partition**: the kernel names partition ``N`` of disk ``D`` ``D`` + ``N`` when
  ``D`` ends in a letter and ``D`` + ``p`` + ``N`` when it ends in a digit
  (``add_partition`` in ``block/partitions/core.c``): ``sda1``, ``vdb2``,
  ``xvda1``, ``nvme0n1p3``, ``mmcblk0p1``, ``loop0p1``, ``md127p1``. A name is a
  partition when it splits that way (``N`` >= 1, no leading zero) into a disk
  name of a known family, or into another device listed in the same input (so
  ``cciss/c0d0p1`` or ``emcpowera1`` next to their disk are partitions too).
  sysfs: ``/sys/class/block/<dev>/partition`` exists and the device's directory
  sits in its disk's.
- **Virtual**: devices without hardware of their own, which sysfs places under
  ``/sys/devices/virtual`` (``/sys/devices/virtual/block`` for these): ``dm-N``
  (device-mapper: LVM, dm-crypt, multipath), ``mdN`` (software RAID), ``loopN``,
  ``zramN``, ``ramN`` (brd), ``nbdN``, ``drbdN``, ``bcacheN``, ``nullbN``,
  ``ublkbN``, ``zdN`` (ZFS zvols).
  An NVMe namespace ``nvmeXnZ`` listed together with controller paths
  ``nvmeXcYnZ`` is the head of native NVMe multipath (sysfs:
  ``/sys/devices/virtual/nvme-subsystem/``): it passes each bio to one path, where
  the kernel counts it (the head counts the same I/O again only when its
  ``queue/iostats`` is switched on, ``drivers/nvme/host/multipath.c``), so it is
  virtual and the paths are the disks, as the ``sd`` legs under a dm-multipath
  ``dm-N``.
  A partition of a virtual device is a partition whose ``virtual`` flag is set.
- **Whole disk**: the names of ``Documentation/admin-guide/devices.txt`` and the
  drivers for real (or hypervisor-provided) disks: ``sd*`` (SCSI, SATA, SAS, USB,
  iSCSI), ``hd*`` (IDE), ``vd*`` (virtio), ``xvd*`` (Xen), ``dasd*`` (s390),
  ``nvmeXnZ`` (NVMe namespaces) and ``nvmeXcYnZ`` (a controller's path to one),
  ``mmcblkN`` and its hardware boot / general purpose areas ``mmcblkNbootM``,
  ``mmcblkNgpM`` (separate disks in sysfs),
  ``srN`` / ``scdN`` (optical), ``fdN`` (floppy), ``pmemN`` (NVDIMM), ``rbdN``
  (Ceph RBD, a device with a bus parent in sysfs).
- **Other**: a name that is none of these (a Lustre OST such as
  ``snx11168-OST00ad`` from LMT, or a device-mapper name ``iostat -N`` printed
  instead of ``dm-N``): no hierarchy can be read from it, so it is taken as a
  whole target and kept in the default selection.

Selections (the ``devices`` parameter, :data:`SELECTIONS`): ``"disks"`` (whole
disks and other targets, the default: nothing counted twice), ``"partitions"``,
``"virtual"``, ``"all"``, or a sequence of kinds from :data:`KINDS`.

Examples
--------
>>> from iochar.analyze import blockdev
>>> [blockdev.device_class(n).kind for n in ("sda", "sda1", "nvme0n1p2", "dm-0", "loop7")]
['disk', 'partition', 'partition', 'virtual', 'virtual']
>>> blockdev.device_class("nvme0n1p2").parent, blockdev.device_class("md127").kind
('nvme0n1', 'virtual')
>>> blockdev.select_targets(["sda", "sda1", "sda2", "dm-0", "loop0", "sr0"])
['sda', 'sr0']
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from iochar.errors import ParameterError

__all__ = [
    "KINDS",
    "SELECTIONS",
    "DeviceClass",
    "device_class",
    "device_table",
    "check_devices",
    "select_targets",
    "sysfs_class",
]

#: The kinds :func:`device_class` gives a device name.
KINDS = ("disk", "partition", "virtual", "other")

#: What each ``devices=`` selection keeps, by kind.
SELECTIONS: dict[str, tuple[str, ...]] = {
    "disks": ("disk", "other"),
    "partitions": ("partition",),
    "virtual": ("virtual",),
    "all": KINDS,
}

#: Whole-disk names of physical (or hypervisor-provided) disk drivers.
_DISK = re.compile(
    r"(?:sd|hd|vd|xvd|dasd)[a-z]+"
    r"|nvme\d+(?:c\d+)?n\d+"
    r"|mmcblk\d+(?:(?:boot|gp)\d+)?"
    r"|sr\d+|scd\d+|fd\d+"
    r"|pmem\d+(?:\.\d+)?s?"
    r"|rbd\d+"
)
#: Virtual block devices (sysfs: /sys/devices/virtual/block).
_VIRTUAL = re.compile(
    r"dm-\d+|md\d+|md_d\d+|loop\d+|zram\d+|ram\d+|nbd\d+|drbd\d+|bcache\d+"
    r"|nullb\d+|ublkb\d+|zd\d+"
)
#: NVMe namespace Z of subsystem X: the block device, and one controller's path to it.
_NVME_HEAD = re.compile(r"nvme(\d+)n(\d+)")
_NVME_PATH = re.compile(r"nvme(\d+)c(\d+)n(\d+)")
#: Partition N of a disk whose name ends in a digit / in anything else
#: (block/partitions/core.c, add_partition: "%sp%d" or "%s%d").
_PART_P = re.compile(r"(.*\d)p([1-9]\d*)")
_PART = re.compile(r"(.*\D)([1-9]\d*)")


@dataclass(frozen=True)
class DeviceClass:
    """What a block device name is.

    Attributes
    ----------
    name : str
        The device name as listed (``/proc/diskstats`` field 3, iostat's ``Device``).
    kind : str
        ``"disk"``, ``"partition"``, ``"virtual"`` or ``"other"`` (see the module
        docstring for the rules).
    parent : str or None
        For a partition, the device it is part of (``sda`` for ``sda1``); else None.
    virtual : bool
        The device (for a partition: its parent) has no hardware of its own
        (sysfs places it under ``/sys/devices/virtual``).
    """

    name: str
    kind: str
    parent: str | None
    virtual: bool


def _whole(name: str, names: frozenset[str] = frozenset()) -> str | None:
    """``"disk"`` or ``"virtual"`` when ``name`` is a whole device of a known family."""
    m = _NVME_HEAD.fullmatch(name)
    if m is not None and any(
        (p := _NVME_PATH.fullmatch(n)) and p.group(1, 3) == m.group(1, 2) for n in names
    ):
        return "virtual"  # a native-multipath head over the controller paths listed with it
    if _DISK.fullmatch(name):
        return "disk"
    if _VIRTUAL.fullmatch(name):
        return "virtual"
    return None


def _parent(name: str, names: frozenset[str]) -> str | None:
    """The disk ``name`` is a partition of, by the kernel's partition naming; else None."""
    for rule in (_PART_P, _PART):
        m = rule.fullmatch(name)
        if m is None:
            continue
        disk = m.group(1)
        if _whole(disk) is not None or (disk in names and _parent(disk, frozenset()) is None):
            return disk
    return None


def device_class(name: str, names: Iterable[str] | None = None) -> DeviceClass:
    """What one block device name is: whole disk, partition (of which disk), virtual.

    Parameters
    ----------
    name : str
        The device name (``sda1``, ``nvme0n1p2``, ``dm-0``...).
    names : iterable of str, optional
        The other device names of the same input (``/proc/diskstats`` lists a
        partition after its disk): a name that splits by the kernel's partition
        naming into one of them is a partition even when its family is unknown.

    Returns
    -------
    DeviceClass
        ``kind``, ``parent`` and ``virtual`` by the rules of the module docstring
        (Linux ``block/partitions/core.c`` naming; sysfs layout).

    Examples
    --------
    >>> device_class("mmcblk0p1")
    DeviceClass(name='mmcblk0p1', kind='partition', parent='mmcblk0', virtual=False)
    >>> device_class("loop0p1").virtual, device_class("md1").kind, device_class("loop10").kind
    (True, 'virtual', 'virtual')
    >>> device_class("emcpowera1").kind, device_class("emcpowera1", ["emcpowera"]).kind
    ('other', 'partition')
    >>> listed = ["nvme0c0n1", "nvme0c1n1", "nvme0n1", "nvme0n1p1"]  # native NVMe multipath
    >>> [device_class(n, listed).kind for n in listed]
    ['disk', 'disk', 'virtual', 'partition']
    """
    name = str(name)
    known = frozenset(str(n) for n in names) if names is not None else frozenset()
    whole = _whole(name, known)
    if whole is not None:
        return DeviceClass(name, whole, None, whole == "virtual")
    parent = _parent(name, known)
    if parent is not None:
        return DeviceClass(name, "partition", parent, _whole(parent, known) == "virtual")
    return DeviceClass(name, "other", None, False)


def device_table(names: Iterable[str]) -> pd.DataFrame:
    """:func:`device_class` of every name of one input, as a table.

    Parameters
    ----------
    names : iterable of str
        The device (target) names of one input; each is judged with the others as
        its ``names``.

    Returns
    -------
    pandas.DataFrame
        One row per distinct name, sorted: ``target``, ``device`` (the kind),
        ``parent`` (None unless a partition) and ``virtual``.
    """
    uniq = sorted({str(n) for n in names})
    known = frozenset(uniq)
    rows = [device_class(n, known) for n in uniq]
    return pd.DataFrame(
        {
            "target": [r.name for r in rows],
            "device": [r.kind for r in rows],
            "parent": [r.parent for r in rows],
            "virtual": [r.virtual for r in rows],
        },
        columns=["target", "device", "parent", "virtual"],
    )


def check_devices(
    devices: str | Sequence[str] | None, caller: str, *, targets_named: bool = False
) -> tuple[str, ...]:
    """The kinds a ``devices`` parameter selects.

    Parameters
    ----------
    devices : str, sequence of str or None
        A key of :data:`SELECTIONS` (``"disks"``, ``"partitions"``, ``"virtual"``,
        ``"all"``), or kinds from :data:`KINDS`; None: ``"all"`` when the caller's
        targets were named (naming a partition is asking for it), else ``"disks"``.
    caller : str
        The function whose parameter it is, for the error.
    targets_named : bool, default False
        The caller was given explicit ``targets``.

    Returns
    -------
    tuple of str
        The kinds kept, in :data:`KINDS` order.

    Raises
    ------
    ParameterError
        ``devices`` is none of these.
    """
    if devices is None:
        return SELECTIONS["all" if targets_named else "disks"]
    if isinstance(devices, str):
        if devices in SELECTIONS:
            return SELECTIONS[devices]
        if devices in KINDS:
            return (devices,)
    elif isinstance(devices, Sequence) and devices and all(d in KINDS for d in devices):
        return tuple(k for k in KINDS if k in devices)
    raise ParameterError(
        "devices",
        caller,
        "None, one of 'disks', 'partitions', 'virtual', 'all', or a sequence of kinds from "
        + ", ".join(repr(k) for k in KINDS),
        devices,
    )


def select_targets(
    names: Iterable[str], devices: str | Sequence[str] | None = "disks", *, caller: str = ""
) -> list[str]:
    """The names of one input a ``devices`` selection keeps.

    Parameters
    ----------
    names : iterable of str
        The device (target) names of one input.
    devices : str, sequence of str or None, default "disks"
        The selection (see :func:`check_devices`; None here means ``"disks"``).
    caller : str, optional
        The function whose parameter ``devices`` is, for the error.

    Returns
    -------
    list of str
        The kept names, sorted.

    Raises
    ------
    ParameterError
        ``devices`` is not a selection.
    """
    kinds = check_devices(devices, caller or "select_targets")
    t = device_table(names)
    return t.loc[t["device"].isin(kinds), "target"].tolist()


def sysfs_class(name: str, *, sys: str | os.PathLike = "/sys") -> DeviceClass | None:
    """What sysfs on this machine says a block device is (the truth the names follow).

    Parameters
    ----------
    name : str
        The device name as ``/proc/diskstats`` lists it (a ``/`` in it is ``!`` in
        sysfs, e.g. ``cciss/c0d0``).
    sys : str or path, default "/sys"
        Where sysfs is mounted.

    Returns
    -------
    DeviceClass or None
        ``kind`` "partition" when ``/sys/class/block/<dev>/partition`` exists (its
        ``parent`` the directory it sits in), "virtual" when the device's directory
        is under ``/sys/devices/virtual/block``, else "disk"; None when sysfs does
        not list the device. Virtual means the device's directory is under
        ``/sys/devices/virtual`` (``block/`` for dm, md, loop, zram...;
        ``nvme-subsystem/`` for an NVMe native-multipath head).
    """
    link = Path(sys) / "class" / "block" / str(name).replace("/", "!")
    if not link.exists():
        return None
    real = link.resolve()
    virtual = (Path(sys) / "devices" / "virtual") in real.parents
    if (link / "partition").exists():
        return DeviceClass(str(name), "partition", real.parent.name.replace("!", "/"), virtual)
    return DeviceClass(str(name), "virtual" if virtual else "disk", None, virtual)
