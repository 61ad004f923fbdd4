"""Insight rule: an I/O phase uses little of the characterized I/O system (Méndez et al.).

Méndez et al. (section 2.3, Table 2) call an application's I/O inefficient when its
phases use a small percentage of what the I/O system was characterized to deliver for
the same operation, access mode and block size: NAS BT-IO *simple* used "only at about
the 30 % of performance on reading operations and less than 15 % on writing
operations" and is "limited by I/O", while the *full* subtype used about 100 % or more.

EFFICIENCY-1 evaluates every significant phase type of a job (phases of one operation,
access mode and size class together, :func:`iochar.analyze.efficiency.phase_types`;
weight -- share of the job's bytes -- at least ``min_weight``) at
every characterized level (:func:`iochar.analyze.efficiency.used`). A phase is judged
against its *limiting level*, the level with the least capacity for its request: the
bottleneck of the path, where its used % is highest; a phase that uses little even of
the slowest level is limited by its own access pattern, not by the I/O system. The
measure is ``unused_pct`` = 100 - used % at the limiting level, for the job's worst
significant phase. Evidence carries the used % at each level (NaN when the level was not
characterized) and ``limiting_level`` as its index in :data:`iochar.load.capacity.LEVELS`
(0 device, 1 local_fs, 2 mount, 3 library).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from iochar.analyze._query import query
from iochar.analyze.insights._rule import Param, Rule
from iochar.load.capacity import LEVELS
from iochar.result import Table

__all__ = ["RULES", "EFFICIENCY"]

_COLS = [
    "job_id",
    "unused_pct",
    "used_pct",
    "phase",
    "size_bytes",
    "phase_bytes",
    "weight",
    "limiting_level",
    "is_write",
    *[f"used_{lv}_pct" for lv in LEVELS],
]


def _efficiency_rows(store, job_id: int | None, values: dict[str, float]) -> Table:
    jobs = query(
        store,
        "SELECT job_id FROM jobs WHERE ($job_id IS NULL OR job_id = $job_id) ORDER BY 1",
        {"job_id": job_id},
    ).df()["job_id"]
    n_cap = query(store, "SELECT count(*) FROM capacity").fetchall()[0][0]
    if not n_cap:
        need = "a capacity table: iochar calibrate DIR --levels ... --db DB, or --from fio/IOR"
        return Table(pd.DataFrame(columns=_COLS), evidence={"needs": {int(j): need for j in jobs}})
    from iochar.analyze import capacity, efficiency  # only with a capacity table to use

    cap = capacity.capacity(store)
    ph = efficiency.phases(store, job_id=job_id)
    sql = ph.sql
    ph = efficiency.phase_types(ph)
    ph = ph[(ph["weight"] >= values["min_weight"]) & ph["rate"].notna()]
    u = efficiency.used(ph, cap)
    rows: list[dict[str, Any]] = []
    if len(u):
        lim = u[u["limiting"]]
        for jid, g in lim.groupby("job_id"):
            worst = g.loc[g["used_pct"].idxmin()]
            per = u[(u["job_id"] == jid) & (u["phase"] == worst["phase"])]
            per = dict(zip(per["level"], per["used_pct"], strict=True))
            rows.append(
                {
                    "job_id": int(jid),
                    "unused_pct": 100.0 - float(worst["used_pct"]),
                    "used_pct": float(worst["used_pct"]),
                    "phase": int(worst["phase"]),
                    "size_bytes": float(worst["size_bytes"]),
                    "phase_bytes": float(worst["bytes"]),
                    "weight": float(worst["weight"]),
                    "limiting_level": LEVELS.index(worst["level"]),
                    "is_write": int(worst["op"] == "write"),
                    **{f"used_{lv}_pct": per.get(lv, math.nan) for lv in LEVELS},
                }
            )
    return Table(pd.DataFrame(rows, columns=_COLS), sql=sql)


EFFICIENCY = Rule(
    code="EFFICIENCY-1",
    topic="io-efficiency",
    title="An I/O phase uses little of what the I/O system was characterized to deliver",
    sql="",
    compute=_efficiency_rows,
    measure="unused_pct",
    warn_at="unused_pct",
    high_at="unused_pct_high",
    params=(
        Param(
            "unused_pct",
            70.0,
            "%",
            "Méndez et al. section 2.3, Table 2: BT-IO simple used about 30 % of the "
            "characterized read capacity and was called I/O-limited (used < 30 % fires)",
        ),
        Param(
            "unused_pct_high",
            85.0,
            "%",
            "Méndez et al. section 2.3: 'less than 15 % on writing operations' for BT-IO "
            "simple, the worse of its two phases (used < 15 % is high)",
        ),
        Param(
            "min_weight",
            0.1,
            "share",
            "iochar: phases under 10 % of the job's bytes are not 'significant phases' "
            "(Méndez section 2.1) and are left out",
        ),
    ),
    recommendation=(
        "Phase type {phase} moved {phase_bytes:bytes} in requests of about {size_bytes:bytes} at "
        "{used_pct:.1f}% of the slowest characterized level (limiting level index "
        "{limiting_level}: 0 device, 1 local FS, 2 mount, 3 I/O library). Used %% per level: "
        "device {used_device_pct:.1f}, local FS {used_local_fs_pct:.1f}, mount "
        "{used_mount_pct:.1f}, library {used_library_pct:.1f}. The system can do more with "
        "this pattern's operation and size: larger or aggregated requests (collective "
        "MPI-IO, buffering), fewer processes contending, or sequential instead of random."
    ).replace("%%", "%"),
    reference="Méndez et al., I/O system efficiency evaluation, section 2.3, Tables 2-3",
    needs="phases (ops from strace/DXT, or Darshan counters) and a capacity table",
)

RULES: tuple[Rule, ...] = (EFFICIENCY,)
