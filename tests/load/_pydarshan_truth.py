"""Every record of a Darshan log as pydarshan's backend reads it, printed as JSON.

Run as a script in a fresh interpreter, one log per process::

    python tests/load/_pydarshan_truth.py LOG

libdarshan-util reads APMPI and APXC records with a process-wide ``static int
first_rec`` (darshan-apmpi-logutils.c), so only the first such log a process
reads comes out right; a fresh process per log gives pydarshan's true reading.
Records are read with the backend's low-level calls (``log_get_generic_record``,
``log_get_apmpi_record``, ``log_get_apxc_record``, ``log_get_record``), which,
unlike ``DarshanReport``, keep records that have no name record (BG/Q).

Records: ``{module: [[id, rank, {counter: value}], ...]}`` in log order, for
every module but DXT_* (whose segments tests compare separately) and LUSTRE.
HEATMAP counters are named as iochar names them
(``HEATMAP_<SRC>_READ_BIN_<i>``...), from the record's name record.
"""

from __future__ import annotations

import json
import math
import sys


def _num(v):
    if isinstance(v, str):
        return v
    v = float(v)
    return None if math.isnan(v) else v


def truth(path: str) -> dict:
    """``records`` (see the module docstring), ``names`` (record id -> name, as text
    keys) and ``partial`` (the modules libdarshan-util flags incomplete)."""
    from darshan.backend import cffi_backend as cb

    log = cb.log_open(path)
    mods = cb.log_get_modules(log)
    names = cb.log_get_name_records(log)
    cb.log_close(log)
    return {
        "records": records(path),
        "names": {str(k): v for k, v in names.items()},
        "partial": [m for m, info in mods.items() if info["partial_flag"]],
    }


def records(path: str) -> dict:
    from darshan.backend import cffi_backend as cb

    log = cb.log_open(path)
    names = cb.log_get_name_records(log)
    out: dict[str, list] = {}
    for mod in cb.log_get_modules(log):
        recs = out[mod] = []
        if mod.startswith("DXT") or mod == "LUSTRE":
            del out[mod]
            continue
        if mod in ("APMPI", "APXC"):
            get = cb.log_get_apmpi_record if mod == "APMPI" else cb.log_get_apxc_record
            kind = "HEADER"
            while (r := get(log, mod, kind)) is not None:
                if kind == "HEADER":
                    c = {
                        f"{mod}_HDR_{k.upper()}": v for k, v in r.items() if k not in ("id", "rank")
                    }
                    c = {k.replace("_HDR_VARIANCE", "_HDR_F_VARIANCE"): v for k, v in c.items()}
                elif mod == "APMPI":
                    c = dict(r["all_counters"])
                else:
                    c = {f"APXC_{k.upper()}": r[k] for k in ("group", "chassis", "blade", "node")}
                    c.update(r["counters"])
                recs.append([r["id"], r["rank"], {k: _num(v) for k, v in c.items()}])
                kind = "PERF"
            continue
        if mod == "HEATMAP":
            while (r := cb.log_get_record(log, mod)) is not None:
                src = names.get(r["id"], "").split(":", 1)[-1] or str(r["id"])
                c = {
                    f"HEATMAP_{src}_F_BIN_WIDTH_SECONDS": r["bin_width_seconds"],
                    f"HEATMAP_{src}_NBINS": r["nbins"],
                }
                c.update({f"HEATMAP_{src}_READ_BIN_{i}": v for i, v in enumerate(r["read_bins"])})
                c.update({f"HEATMAP_{src}_WRITE_BIN_{i}": v for i, v in enumerate(r["write_bins"])})
                recs.append([r["id"], r["rank"], {k: _num(v) for k, v in c.items()}])
            continue
        cmod = mod.replace("/", "")  # the C arrays are bgq_counter_names...
        cn = cb.counter_names(cmod)
        fn = cb.counter_names(cmod, fcnts=True)
        while (r := cb.log_get_generic_record(log, mod, dtype="numpy")) is not None:
            c = dict(zip(cn, r["counters"].tolist(), strict=True))
            c.update(zip(fn, r["fcounters"].tolist(), strict=True))
            recs.append([r["id"], r["rank"], {k: _num(v) for k, v in c.items()}])
    cb.log_close(log)
    return out


if __name__ == "__main__":
    json.dump(truth(sys.argv[1]), sys.stdout)
