"""What every chart shares: the theme, the lazy altair import and the column check."""

from __future__ import annotations

import pandas as pd

from iochar.errors import MissingDependencyError, ParameterError

__all__ = ["THEME"]

#: One look for every chart.
THEME = {"width": 640, "height": 220}


def _alt():
    """The altair module, or MissingDependencyError naming the ``report`` extra."""
    try:
        import altair as alt
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise MissingDependencyError("altair", "report", "drawing charts") from exc
    return alt


def _need(df: pd.DataFrame, cols: tuple[str, ...], caller: str) -> None:
    """Raise ParameterError unless ``df`` has every column in ``cols``."""
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ParameterError(
            "df", caller, f"a DataFrame with columns {', '.join(cols)} (missing {missing})", "..."
        )
