"""Tooltips that show a missing value as "—", not ``null`` or ``NaN``.

Vega-Lite writes a tooltip as ``isValid(v) ? format(v, f) : "" + v``, so a row whose
value is missing (JSON ``null``: pandas' NaN, NaT, None and ``pd.NA`` all become it)
reads ``null`` on hover, in every frontend. :func:`show_missing` rewrites a chart's
spec so each tooltip entry reads a string computed once per row: the value formatted
exactly as Vega-Lite would have formatted it, or :data:`MISSING` when there is none.
The notebook renderer applies it to every chart it shows (issue 16, item 2).
"""

from __future__ import annotations

import copy
import json
from typing import Any

__all__ = ["MISSING", "show_missing"]

#: What a tooltip shows for a missing value (the same mark as tables).
MISSING = "—"

#: Vega-Lite's default tooltip format of a date (``config.timeFormat``).
_VL_TIME_FORMAT = "%b %d, %Y"

#: Tooltip entries left as they are: computed from several rows, or conditional.
_KEEP = ("aggregate", "bin", "condition", "value", "datum")


def show_missing(spec: dict) -> dict:
    """A copy of a Vega-Lite spec whose tooltips show a missing value as "—".

    Every tooltip entry naming a plain field (no aggregate or bin) in every view of
    the spec (layers, facets, concatenations, repeats) is replaced by a string field
    that a ``calculate`` transform of the same view fills:

    * quantitative: ``format(v, f)`` with the entry's format (d3; Vega-Lite's default
      ``""`` when none) if ``v`` is a finite number, else "—";
    * temporal: ``utcFormat``/``timeFormat`` of ``toDate(v)`` with the entry's format
      (UTC when its ``timeUnit`` is a UTC one or ``formatType`` is ``"utc"``) if ``v``
      is a valid date, else "—" (altair writes NaT as ``""``);
    * nominal and ordinal: ``v`` as text, else "—".

    The entry's title is kept (the field's name when it had none), so the tooltip
    reads as before for every row that has a value.

    Parameters
    ----------
    spec : dict
        A Vega-Lite spec, as ``chart.to_dict()`` gives it. Not modified.

    Returns
    -------
    dict
        The rewritten copy.

    Examples
    --------
    >>> spec = {"mark": "point", "encoding": {"tooltip": [{"field": "y", "type": "quantitative"}]}}
    >>> out = show_missing(spec)
    >>> out["encoding"]["tooltip"]
    [{'field': '__tip_0', 'type': 'nominal', 'title': 'y'}]
    >>> out["transform"][0]["calculate"]
    'isValid(datum["y"]) && isFinite(datum["y"]) ? format(datum["y"], "") : "—"'
    """
    out = copy.deepcopy(spec)
    counter = [0]
    _walk(out, counter)
    return out


def _walk(node: Any, counter: list[int]) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, counter)
        return
    if not isinstance(node, dict):
        return
    encoding = node.get("encoding")
    if isinstance(encoding, dict) and "tooltip" in encoding:
        tips = encoding["tooltip"]
        single = isinstance(tips, dict)
        entries = [tips] if single else tips
        if isinstance(entries, list):
            new, calcs = [], []
            for entry in entries:
                rewritten = _rewrite(entry, counter)
                if rewritten is None:
                    new.append(entry)
                else:
                    new.append(rewritten[0])
                    calcs.append(rewritten[1])
            if calcs:
                encoding["tooltip"] = new[0] if single else new
                node["transform"] = [*node.get("transform", []), *calcs]
    for key, value in node.items():
        if key not in ("encoding", "datasets", "data", "transform"):
            _walk(value, counter)


def _rewrite(entry: Any, counter: list[int]) -> tuple[dict, dict] | None:
    """The new tooltip entry and its ``calculate`` transform, or None to keep it."""
    if not isinstance(entry, dict) or any(k in entry for k in _KEEP):
        return None
    field = entry.get("field")
    kind = entry.get("type")
    # a dotted or bracketed name is a nested path to Vega-Lite: left alone
    if not isinstance(field, str) or any(c in field for c in ".[]\\"):
        return None
    ref = f"datum[{json.dumps(field)}]"
    dash = json.dumps(MISSING, ensure_ascii=False)
    if kind == "quantitative":
        if entry.get("formatType", "number") != "number":
            return None
        fmt = json.dumps(entry.get("format", ""))
        expr = f"isValid({ref}) && isFinite({ref}) ? format({ref}, {fmt}) : {dash}"
    elif kind == "temporal":
        utc = str(entry.get("timeUnit", "")).startswith("utc") or entry.get("formatType") == "utc"
        fmt = json.dumps(entry.get("format", _VL_TIME_FORMAT))
        fn = "utcFormat" if utc else "timeFormat"
        # toDate gives milliseconds: null for "" (altair's NaT), NaN for no date
        when = f"toDate({ref})"
        expr = f"isValid({when}) ? {fn}({when}, {fmt}) : {dash}"
    elif kind in ("nominal", "ordinal"):
        expr = f"isValid({ref}) ? '' + {ref} : {dash}"
    else:
        return None
    name = f"__tip_{counter[0]}"
    counter[0] += 1
    title = entry.get("title", field)
    return {"field": name, "type": "nominal", "title": title}, {"calculate": expr, "as": name}
