"""I/O performance variance across repeated jobs (Carns et al. 2011, section 4.1, Table IV).

Production workloads repeat: the same user runs the same application at the
same size on the same data again and again. Carns et al. (2011) grouped such
jobs "by number of processes, number of files, amount of data read and
written, and user id" -- the bytes "did not match exactly within each
grouping, but it never varied by more than 1%" -- and reported for each group
the mean, minimum, maximum, standard deviation and coefficient of variation
(CV) of the I/O time of the slowest rank (Table IV): differences between runs
of the same job are external (contention), not the application's.

:func:`repeated_jobs` forms those groups set-wise in DuckDB:

1. jobs are partitioned by the identity columns ``by`` (default user, app,
   process count and file count; the application is added to the paper's
   list so two programs of one user never mix);
2. within a partition, jobs fall into cells of a grid on ``log(1 + bytes
   read)`` and ``log(1 + bytes written)`` of width ``log(1 + tolerance)``:
   one GROUP BY gives each cell's jobs and the mergeable moments of their
   I/O time (count, mean, variance, min, max);
3. on that small table, cells of one identity that touch (grid neighbours)
   merge into a group when the union of their jobs still spreads by at most
   ``tolerance`` in bytes read and in bytes written (so repeated jobs that
   straddle a cell edge stay together); a union that spreads more (a chain
   of small steps) stays split into its cells, each of which spreads less
   than ``tolerance``: no group ever spreads by more;
4. Table IV's mean, standard deviation and CV per group combine the cells'
   moments exactly (Chan et al.'s pairwise update), min and max likewise.
   Spreads compare ``1 + bytes``, so jobs that write nothing group together.

Jobs missing an identity field (traces carry no user, and know only the
ranks that did I/O) are grouped instead by their I/O *signature* with
:func:`cluster_jobs` (``cluster="auto"``), and ``members.mode`` says which
rule grouped each job.

:func:`similar_jobs` places one job against the other runs of its group
(percentiles and z-scores), :func:`most_variable_job` picks the job worth
placing (the slowest run of the group that varies most), and :func:`cluster_jobs` is the signature
clustering on its own, scored against known groups by the adjusted Rand
index when they are given.

Units: seconds, bytes (GiB = 2**30 bytes in Table IV's columns), percent.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

from iochar._validation import check_choice, check_int, check_names, check_real
from iochar.errors import MissingDependencyError, ParameterError
from iochar.result import Result

__all__ = [
    "RepeatedJobs",
    "SimilarJobs",
    "ClusterResult",
    "repeated_jobs",
    "similar_jobs",
    "cluster_jobs",
    "most_variable_job",
    "IDENTITY",
    "SIGNATURE",
]

GiB = float(1 << 30)

#: Default identity columns (section 4.1's grouping, plus the application).
IDENTITY = ("user", "app", "nprocs", "files")

#: Default signature features of :func:`cluster_jobs`.
SIGNATURE = ("nprocs", "files", "bytes_read", "bytes_written")

#: Columns ``by`` and ``features`` may name (identifiers never come from
#: anywhere else into SQL).
_ALLOWED_BY = (
    "user", "app", "nprocs", "nnodes", "files", "written_files", "io_ranks", "sharing",
    "interfaces", "layer", "rank0_io",
)  # fmt: skip
_ALLOWED_FEATURES = (
    "nprocs", "nnodes", "files", "written_files", "io_ranks", "bytes_read", "bytes_written",
    "reads", "writes", "unique_files", "shared_files", "partial_files",
)  # fmt: skip
_ALLOWED_TIME = ("slowest_io_s", "unique_io_s", "runtime_s")

#: Metrics :func:`similar_jobs` compares by default.
DEFAULT_METRICS = (
    "slowest_io_s", "mib_s", "mib_s_cn", "io_time_pct", "meta_time_pct", "runtime_s",
)  # fmt: skip


def _q(name: str) -> str:
    return '"' + name + '"'


def _exact_sql(by: tuple[str, ...], time: str) -> str:
    """Jobs grouped by identity: with an I/O time and, in ``auto`` mode, every field."""
    known = "".join(f" AND {_q(c)} IS NOT NULL" for c in by)
    return f"({_q(time)} IS NOT NULL AND ($mode = 'never' OR ($mode = 'auto'{known})))"


def _cells_sql(by: tuple[str, ...], time: str) -> str:
    """Step 1 over view ``jm``: jobs binned by identity and byte cells (one GROUP BY).

    A cell spans a factor ``1 + tol`` of ``1 + bytes`` in bytes read and in
    bytes written; per cell the mergeable moments of the I/O time and the
    list of its jobs. Column names come from the allowed lists only.
    """
    ident = "".join(f"{_q(c)}, " for c in by)
    code = f"dense_rank() OVER (ORDER BY {ident[:-2]}) - 1" if by else "0"
    t = _q(time)
    return f"""
SELECT *, {code} AS ident FROM (
SELECT {ident}list(job_id) AS ids,
       floor(ln(1 + coalesce(bytes_read, 0)) / ln(1 + $tol))::BIGINT AS kr,
       floor(ln(1 + coalesce(bytes_written, 0)) / ln(1 + $tol))::BIGINT AS kw,
       count(*) AS n, avg({t}) AS mean, var_pop({t}) AS var, min({t}) AS tmin, max({t}) AS tmax,
       min(coalesce(bytes_read, 0))::DOUBLE AS br_min,
       max(coalesce(bytes_read, 0))::DOUBLE AS br_max,
       min(coalesce(bytes_written, 0))::DOUBLE AS bw_min,
       max(coalesce(bytes_written, 0))::DOUBLE AS bw_max,
       sum(coalesce(bytes_read, 0))::DOUBLE AS br_sum,
       sum(coalesce(bytes_written, 0))::DOUBLE AS bw_sum
FROM jm WHERE {_exact_sql(by, time)}
GROUP BY ALL
)
"""


def _rest_sql(by: tuple[str, ...], time: str, features: list[str]) -> str:
    """The jobs left to signature clustering: an I/O time but not grouped by identity."""
    cols = ", ".join(_q(c) for c in dict.fromkeys(["job_id", *by, *features, "bytes_read",
                                                   "bytes_written", time]))  # fmt: skip
    return f"""
SELECT {cols} FROM jm
WHERE {_q(time)} IS NOT NULL AND NOT {_exact_sql(by, time)}
ORDER BY job_id
"""


_CLUSTER_CELLS_SQL = """
SELECT gkey, count(*) AS n, avg(t) AS mean, var_pop(t) AS var, min(t) AS tmin, max(t) AS tmax,
       min(br) AS br_min, max(br) AS br_max, min(bw) AS bw_min, max(bw) AS bw_max,
       sum(br) AS br_sum, sum(bw) AS bw_sum
FROM extra GROUP BY gkey
"""

#: Neighbouring cells (dr, dw) looked up from each cell; with their mirror
#: images these are all eight neighbours.
_STEPS = ((1, -1), (1, 0), (1, 1), (0, 1))


def _merge_cells(ident: np.ndarray, kr, kw, lo_r, hi_r, lo_w, hi_w, tol: float) -> np.ndarray:
    """Group key per cell: adjacent cells of one identity whose union spreads
    by at most ``tol`` form one group; a union that spreads more stays split
    into its cells (each spreads less than ``tol`` by construction)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(ident)
    if n == 0:
        return np.zeros(0, np.int64)
    # one int64 key per cell: (identity, kr + 1, kw + 1) packed in bits
    bits = int(max(kr.max(), kw.max()) + 3).bit_length()
    key = (ident.astype(np.int64) << (2 * bits)) | ((kr + 1) << bits) | (kw + 1)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    rows, cols = [np.arange(n)], [np.arange(n)]
    for dr, dw in _STEPS:  # a sorted lookup per direction, not a self-join
        want = (ident.astype(np.int64) << (2 * bits)) | ((kr + 1 + dr) << bits) | (kw + 1 + dw)
        pos = np.minimum(np.searchsorted(sk, want), n - 1)
        hit = sk[pos] == want
        rows.append(np.flatnonzero(hit))
        cols.append(order[pos[hit]])
    r, c = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(len(r), np.int8), (r, c)), shape=(n, n))
    m, comp = connected_components(graph, directed=False)
    lo_rc, hi_rc = np.full(m, np.inf), np.full(m, -np.inf)
    lo_wc, hi_wc = np.full(m, np.inf), np.full(m, -np.inf)
    np.minimum.at(lo_rc, comp, lo_r)
    np.maximum.at(hi_rc, comp, hi_r)
    np.minimum.at(lo_wc, comp, lo_w)
    np.maximum.at(hi_wc, comp, hi_w)
    wide = ((1 + hi_rc) > (1 + tol) * (1 + lo_rc)) | ((1 + hi_wc) > (1 + tol) * (1 + lo_wc))
    gkey = np.where(wide[comp], m + np.arange(n), comp)
    return pd.factorize(gkey)[0].astype(np.int64)


#: Per-cell moment columns of the cells query.
_MOMENTS = ("n", "mean", "var", "tmin", "tmax", "br_min", "br_max", "bw_min", "bw_max",
            "br_sum", "bw_sum")  # fmt: skip


def _combine(gkey: np.ndarray, cells) -> dict[str, np.ndarray]:
    """Table IV per group from per-cell moments (Chan et al.'s pairwise update)."""
    k = int(gkey.max()) + 1 if len(gkey) else 0
    c = {x: np.asarray(cells[x], np.float64) for x in _MOMENTS}
    n = np.bincount(gkey, c["n"], k)
    mean = np.bincount(gkey, c["n"] * c["mean"], k) / n
    m2 = np.bincount(gkey, c["n"] * (np.nan_to_num(c["var"]) + (c["mean"] - mean[gkey]) ** 2), k)
    out = {"samples": n.astype(np.int64), "mean_s": mean}
    with np.errstate(invalid="ignore", divide="ignore"):
        out["std_s"] = np.where(n > 1, np.sqrt(m2 / np.maximum(n - 1, 1)), np.nan)
        out["cv_pct"] = np.where(mean != 0, 100 * out["std_s"] / mean, np.nan)
        out["gib_read"] = np.bincount(gkey, c["br_sum"], k) / n / GiB
        out["gib_written"] = np.bincount(gkey, c["bw_sum"], k) / n / GiB
    for name, src, fn, init in (
        ("min_s", "tmin", np.minimum, np.inf), ("max_s", "tmax", np.maximum, -np.inf),
        ("br_lo", "br_min", np.minimum, np.inf), ("br_hi", "br_max", np.maximum, -np.inf),
        ("bw_lo", "bw_min", np.minimum, np.inf), ("bw_hi", "bw_max", np.maximum, -np.inf),
    ):  # fmt: skip
        acc = np.full(k, init)
        fn.at(acc, gkey, c[src])
        out[name] = acc
    with np.errstate(invalid="ignore", divide="ignore"):
        for d in ("r", "w"):
            lo, hi = out.pop(f"b{d}_lo"), out.pop(f"b{d}_hi")
            out[f"{'read' if d == 'r' else 'write'}_spread_pct"] = np.where(
                lo > 0, 100 * (hi - lo) / lo, np.nan
            )
    return out


@dataclass(frozen=True)
class RepeatedJobs(Result):
    """Groups of repeated jobs and their I/O-time spread (Carns et al. 2011, Table IV).

    Attributes
    ----------
    groups : pandas.DataFrame
        One row per group of at least ``min_samples`` jobs, largest first:
        ``group_id``, ``mode`` (``exact``: same identity; ``cluster``: same
        signature, see :func:`cluster_jobs`), the identity columns ``by``
        (``procs`` and ``files`` named as in Table IV when grouped on),
        ``samples``, ``gib_read``, ``gib_written`` (means) [GiB], ``mean_s``,
        ``min_s``, ``max_s``, ``std_s`` (sample standard deviation,
        ``ddof=1``) [s] and ``cv_pct`` [%] of the slowest rank's I/O time,
        and the evidence ``read_spread_pct`` and ``write_spread_pct`` (max /
        min - 1 of the group's bytes read and written; NaN when some job
        moved no bytes that way) [%].
    members : pandas.DataFrame
        ``job_id``, ``group_id`` (NA for a job in no group of
        ``min_samples``), ``mode`` and ``samples`` (its group's size) for
        every job with an I/O time, in ``job_id`` order.
    tolerance : float
        Relative spread allowed in bytes read and written.
    by : tuple of str
        The identity columns.
    time : str
        The I/O-time column summarized.
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store, or None.
    """

    groups: pd.DataFrame
    members: pd.DataFrame
    tolerance: float
    by: tuple[str, ...]
    time: str


@dataclass(frozen=True)
class SimilarJobs(Result):
    """One job against the other runs of its group.

    Attributes
    ----------
    job_id : int
        The job.
    group_id : int or None
        Its group in :func:`repeated_jobs` (None: no other run found).
    mode : str or None
        How the group was formed (``exact`` or ``cluster``).
    placement : pandas.DataFrame
        One row per metric: ``metric``, ``value`` (the job's), ``n`` (other
        runs with a value), ``mean``, ``std`` (``ddof=1``), ``min``,
        ``median``, ``max`` of the other runs, ``percentile`` (share of
        other runs below the value, ties counted half) [%], ``z`` ((value -
        mean) / std) and ``note`` (why a number is missing).
    history : pandas.DataFrame
        The group's jobs in start order with the compared metrics and
        ``is_job`` marking this one.
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store, or None.
    """

    job_id: int
    group_id: int | None
    mode: str | None
    placement: pd.DataFrame
    history: pd.DataFrame


@dataclass(frozen=True)
class ClusterResult(Result):
    """Jobs clustered by I/O signature.

    Attributes
    ----------
    labels : pandas.DataFrame
        ``job_id`` and ``cluster`` (0, 1, ...; a job alike to no other is a
        cluster of its own).
    features : tuple of str
        The signature columns used.
    method : str
        ``tolerance`` (DBSCAN, Chebyshev distance, eps = 1 tolerance unit) or
        ``hdbscan``.
    params : dict
        The estimator's parameters as used.
    n_clusters : int
        Clusters found (singletons included).
    adjusted_rand : float or None
        Adjusted Rand index against ``truth`` (1 = the same partition, 0 =
        chance), when truth was given.
    sql : str or None
        The SQL that read the store, or None.
    """

    labels: pd.DataFrame
    features: tuple[str, ...]
    method: str
    n_clusters: int
    adjusted_rand: float | None = None


def _frame(data, caller: str, **kw) -> pd.DataFrame:
    """Per-job metrics from a Store (computed), a JobMetrics or a DataFrame."""
    from iochar.analyze.jobs import JobMetrics, job_metrics

    if isinstance(data, JobMetrics):
        return data.jobs
    if isinstance(data, pd.DataFrame):
        return data
    if hasattr(data, "sql") and hasattr(data, "con"):
        return job_metrics(data, **kw).jobs
    raise ParameterError(
        "data", caller, "an iochar Store, a JobMetrics or a per-job DataFrame", type(data)
    )


def _check_tol(tolerance, caller) -> float:
    return check_real(
        tolerance,
        "tolerance",
        caller,
        "a float in (0, 1)",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
    )


def repeated_jobs(
    data,
    tolerance: float = 0.01,
    *,
    by=IDENTITY,
    min_samples: int = 2,
    time: str = "slowest_io_s",
    cluster: str = "auto",
    procs_per_node: int | None = None,
) -> RepeatedJobs:
    """Groups of repeated jobs with Table IV's columns (Carns et al. 2011, section 4.1).

    Parameters
    ----------
    data : iochar.Store, iochar.analyze.jobs.JobMetrics or pandas.DataFrame
        The store (job metrics are computed with
        :func:`~iochar.analyze.jobs.job_metrics`), those metrics, or any
        per-job frame with ``job_id``, the ``by`` columns, ``bytes_read``,
        ``bytes_written`` [bytes] and the ``time`` column [s].
    tolerance : float, default 0.01
        Largest relative spread of bytes read, and of bytes written, within
        a group (the paper's 1%), in (0, 1).
    by : sequence of str, default ("user", "app", "nprocs", "files")
        Identity columns that must be equal within a group.
    min_samples : int, default 2
        Smallest group reported.
    time : str, default "slowest_io_s"
        The I/O-time column summarized [s] (Table IV: the slowest rank's).
    cluster : {"auto", "never", "always"}, default "auto"
        ``auto``: jobs missing an identity field are grouped by signature
        (:func:`cluster_jobs`, same ``tolerance``, within the identity
        fields all of them have); ``never``: a missing
        field counts as one more value; ``always``: every job by signature.
    procs_per_node : int, optional
        Passed to :func:`~iochar.analyze.jobs.job_metrics` when ``data`` is
        a store.

    Returns
    -------
    RepeatedJobs
        Table IV (``groups``) and each job's group (``members``).

    Raises
    ------
    ParameterError
        An argument is out of range or ``data`` lacks a needed column.
    """
    caller = "repeated_jobs"
    tol = _check_tol(tolerance, caller)
    by = check_names(by, "by", caller, _ALLOWED_BY, empty_ok=True)
    check_choice(time, "time", caller, _ALLOWED_TIME, "one of " + ", ".join(_ALLOWED_TIME))
    check_int(min_samples, "min_samples", caller, "an int >= 1", low=1)
    check_choice(
        cluster, "cluster", caller, ("auto", "never", "always"), "'auto', 'never' or 'always'"
    )
    df = _frame(data, caller, procs_per_node=procs_per_node)
    need = ["job_id", *by, "bytes_read", "bytes_written", time]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ParameterError("data", caller, f"per-job columns {need} (missing {missing})", "...")
    con = duckdb.connect(":memory:")
    try:
        con.register("jm", df)
        # 1. one GROUP BY: identity x cells of bytes read and written, with
        #    each cell's moments and jobs
        got = con.sql(_cells_sql(by, time), params={"tol": tol, "mode": cluster})
        got = got.to_arrow_table()
        ids = got.column("ids").combine_chunks()
        cells = {c: got.column(c).to_numpy() for c in _MOMENTS + ("kr", "kw", "ident")}
        # 2. on the small table: adjacent cells within tolerance of each other merge
        gkey = _merge_cells(
            cells["ident"], cells["kr"], cells["kw"],
            *(cells[c] for c in ("br_min", "br_max", "bw_min", "bw_max")), tol,
        )  # fmt: skip
        n_exact = int(gkey.max()) + 1 if len(gkey) else 0
        # 3. each job's group: its cell's
        members = pd.DataFrame(
            {
                "job_id": ids.flatten().to_numpy(zero_copy_only=False),
                "gkey": np.repeat(gkey, ids.value_lengths().to_numpy(zero_copy_only=False)),
            }
        )
        stats = _combine(gkey, cells)
        _, first = np.unique(gkey, return_index=True)  # a cell of each group, in group order
        ident_vals = got.select(list(by)).take(first).to_pandas()
        rest = None
        if cluster != "never":  # jobs missing an identity field: by signature
            q = _rest_sql(by, time, [c for c in SIGNATURE if c in df.columns])
            rest = con.sql(q, params={"mode": cluster}).df()
        if rest is not None and len(rest):
            within = [c for c in by if rest[c].notna().all()]
            feats = [c for c in SIGNATURE if c in rest]
            cl = cluster_jobs(rest, tolerance=tol, features=feats, within=within)
            extra = pd.DataFrame(
                {
                    "job_id": rest["job_id"].to_numpy().astype("int64"),
                    "gkey": cl.labels["cluster"].to_numpy() + n_exact,
                    "br": pd.to_numeric(rest["bytes_read"]).fillna(0).to_numpy(np.float64),
                    "bw": pd.to_numeric(rest["bytes_written"]).fillna(0).to_numpy(np.float64),
                    "t": pd.to_numeric(rest[time]).to_numpy(np.float64),
                }
            )
            con.register("extra", extra)
            cc = con.sql(_CLUSTER_CELLS_SQL).df().sort_values("gkey")
            more = _combine(cc["gkey"].to_numpy() - n_exact, cc)
            stats = {k: np.concatenate([v, more[k]]) for k, v in stats.items()}
            members = pd.concat([members, extra[["job_id", "gkey"]]], ignore_index=True)
            _, lead = np.unique(extra["gkey"].to_numpy(), return_index=True)
            ident_vals = pd.concat(
                [ident_vals, rest[list(by)].iloc[lead].reset_index(drop=True)], ignore_index=True
            )
    finally:
        con.close()
    # groups of min_samples jobs or more, largest first (ties: longer mean first)
    sizes = stats["samples"]
    keep = np.flatnonzero(sizes >= min_samples)
    keep = keep[np.lexsort((-stats["mean_s"][keep], -sizes[keep]))]
    gid = np.full(len(sizes), -1, np.int64)
    gid[keep] = np.arange(len(keep))
    modes = pd.CategoricalDtype(["exact", "cluster"])
    groups = pd.DataFrame(
        {
            "group_id": np.arange(len(keep)),
            "mode": pd.Categorical.from_codes((keep >= n_exact).astype(np.int8), dtype=modes),
            **{c: ident_vals[c].iloc[keep].to_numpy() for c in by},
        }
    )
    for c in ("samples", "gib_read", "gib_written", "mean_s", "min_s", "max_s", "std_s",
              "cv_pct", "read_spread_pct", "write_spread_pct"):  # fmt: skip
        groups[c] = stats[c][keep]
    groups = groups.rename(columns={"nprocs": "procs"})
    jid = members["job_id"].to_numpy()
    mk = members["gkey"].to_numpy()
    order = np.argsort(jid, kind="stable")
    jid, mk = jid[order], mk[order]
    members = pd.DataFrame(
        {
            "job_id": jid,
            "group_id": pd.arrays.IntegerArray(np.maximum(gid[mk], 0), gid[mk] < 0),
            "mode": pd.Categorical.from_codes((mk >= n_exact).astype(np.int8), dtype=modes),
            "samples": sizes[mk],
        }
    )
    params = dict(
        tolerance=tolerance,
        by=by,
        min_samples=min_samples,
        time=time,
        cluster=cluster,
        procs_per_node=procs_per_node,
    )
    return RepeatedJobs(groups, members, tol, by, time, params=params)


def cluster_jobs(
    data,
    *,
    tolerance: float = 0.01,
    features=SIGNATURE,
    method: str = "tolerance",
    min_cluster_size: int = 5,
    within=(),
    truth=None,
    procs_per_node: int | None = None,
) -> ClusterResult:
    """Cluster jobs by I/O signature when their identity is unknown (scikit-learn).

    Features: the ``features`` columns (default process count, file count,
    bytes read, bytes written -- the paper's grouping quantities without the
    user), each as ``log(1 + x)``, so that a relative difference becomes a
    distance. I/O time is never a feature: it is what the groups are for.

    - ``method="tolerance"`` (default): each feature is divided by
      ``log(1 + tolerance)``, so one unit is the grouping tolerance, and
      :class:`sklearn.cluster.DBSCAN` runs with ``eps=1``,
      ``metric="chebyshev"`` and ``min_samples=1``: two jobs are linked when
      every feature agrees within ``tolerance`` (relative), and clusters
      are the linked sets (single linkage at the paper's 1%). No parameter
      is tuned; a job alike to no other is a cluster of its own.
    - ``method="hdbscan"``: features standardized
      (:class:`sklearn.preprocessing.StandardScaler`), then
      :class:`sklearn.cluster.HDBSCAN` with ``min_cluster_size`` and
      ``min_samples = 2 * min_cluster_size`` (with ``min_samples`` equal to
      the cluster size, the jitter of bytes within a group of repeated jobs
      splits it into dense sub-clusters), for signatures noisier than any
      fixed tolerance. It needs groups of at least ``2 * min_cluster_size``
      jobs, and does not separate groups closer to each other than the
      density scale (3% apart in one feature, say); jobs it leaves as noise
      become clusters of their own.

    Columns in ``within`` (e.g. the application, when known) must be equal
    within a cluster: each distinct combination is one more feature, 1,000
    units apart.

    Parameters
    ----------
    data : iochar.Store, iochar.analyze.jobs.JobMetrics or pandas.DataFrame
        Jobs with ``job_id`` and the feature columns.
    tolerance : float, default 0.01
        Relative difference per feature within which jobs link, in (0, 1)
        (``method="tolerance"``).
    features : sequence of str, default ("nprocs", "files", "bytes_read", "bytes_written")
        Signature columns (counts and bytes, all >= 0).
    method : {"tolerance", "hdbscan"}, default "tolerance"
        Clustering rule (above).
    min_cluster_size : int, default 5
        HDBSCAN's smallest cluster (``method="hdbscan"``), >= 2.
    within : sequence of str, default ()
        Identity columns that must match within a cluster (from the
        identity columns :func:`repeated_jobs` accepts).
    truth : pandas.Series or pandas.DataFrame, optional
        Known groups: a Series of labels indexed by ``job_id``, or a frame
        with ``job_id`` and ``group``; the result then carries the adjusted
        Rand index over the jobs present in both.
    procs_per_node : int, optional
        Passed to :func:`~iochar.analyze.jobs.job_metrics` for a store.

    Returns
    -------
    ClusterResult
        Labels, the features and parameters used, and the score.

    Raises
    ------
    ParameterError
        An argument is out of range, or a feature column is missing.
    MissingDependencyError
        scikit-learn is not installed (``iochar[report]``).
    """
    caller = "cluster_jobs"
    tol = _check_tol(tolerance, caller)
    features = check_names(features, "features", caller, _ALLOWED_FEATURES)
    within = check_names(within, "within", caller, _ALLOWED_BY, empty_ok=True)
    check_choice(method, "method", caller, ("tolerance", "hdbscan"), "'tolerance' or 'hdbscan'")
    check_int(min_cluster_size, "min_cluster_size", caller, "an int >= 2", low=2)
    df = _frame(data, caller, procs_per_node=procs_per_node)
    missing = [c for c in ("job_id", *features, *within) if c not in df.columns]
    if missing:
        raise ParameterError("data", caller, f"columns job_id and {features}", missing)
    try:
        from sklearn.cluster import DBSCAN, HDBSCAN
        from sklearn.preprocessing import StandardScaler
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise MissingDependencyError("sklearn", "report", "clustering jobs") from exc
    x = np.log1p(
        np.clip(
            df[list(features)].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64), 0, None
        )
    )
    x = np.nan_to_num(x, nan=-1.0)  # unknown: its own value, far from any count
    code = (
        df.groupby(list(within), dropna=False, sort=False).ngroup().to_numpy(np.float64)
        if within
        else np.zeros(len(df))
    )
    if len(df) == 0:
        labels = np.zeros(0, np.int64)
        params: dict = {}
    elif method == "tolerance":
        params = {"eps": 1.0, "min_samples": 1, "metric": "chebyshev", "unit": np.log1p(tol)}
        est = DBSCAN(eps=1.0, min_samples=1, metric="chebyshev")
        labels = est.fit_predict(np.column_stack([x / np.log1p(tol), 1000.0 * code]))
    else:
        params = {
            "min_cluster_size": int(min_cluster_size),
            "min_samples": 2 * int(min_cluster_size),
            "scaler": "StandardScaler",
        }
        z = StandardScaler().fit_transform(x) if len(df) > 1 else x
        z = np.column_stack([z, 1000.0 * code])
        if len(df) >= min_cluster_size:
            est = HDBSCAN(
                min_cluster_size=int(min_cluster_size),
                min_samples=2 * int(min_cluster_size),
                copy=True,
            )
            labels = est.fit_predict(z)
        else:
            labels = np.full(len(df), -1)
    labels = np.asarray(labels, np.int64)
    noise = labels < 0
    if noise.any():  # every unclustered job a cluster of its own
        labels[noise] = labels.max(initial=-1) + 1 + np.arange(int(noise.sum()))
    # renumber 0.. in order of first appearance for stable output
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))
    labels = rank[inv]
    out = pd.DataFrame({"job_id": df["job_id"].to_numpy().astype("int64"), "cluster": labels})
    ari = None
    if truth is not None:
        ari = _adjusted_rand(out, truth, caller)
    n = int(labels.max() + 1) if len(labels) else 0
    return ClusterResult(out, features, method, n, ari, params=params)


def _adjusted_rand(labels: pd.DataFrame, truth, caller: str) -> float:
    from sklearn.metrics import adjusted_rand_score

    if isinstance(truth, pd.DataFrame):
        if not {"job_id", "group"} <= set(truth.columns):
            raise ParameterError("truth", caller, "a frame with job_id and group", "...")
        truth = truth.set_index("job_id")["group"]
    if not isinstance(truth, pd.Series):
        raise ParameterError("truth", caller, "a Series indexed by job_id", type(truth))
    m = labels.merge(truth.rename("truth"), left_on="job_id", right_index=True)
    if m.empty:
        raise ParameterError("truth", caller, "labels for some of the jobs clustered", "none")
    return float(adjusted_rand_score(m["truth"].astype(str), m["cluster"]))


def similar_jobs(
    data,
    job_id: int,
    *,
    tolerance: float = 0.01,
    by=IDENTITY,
    metrics=DEFAULT_METRICS,
    cluster: str = "auto",
    procs_per_node: int | None = None,
) -> SimilarJobs:
    """Place one job against the other runs of its group (percentiles and z-scores).

    The group is the job's group in :func:`repeated_jobs` (same identity and
    bytes within ``tolerance``, or same signature when the identity is
    unknown); each metric of the job is compared with the distribution of
    the *other* runs, so that the job does not pull its own reference.

    Parameters
    ----------
    data : iochar.Store, iochar.analyze.jobs.JobMetrics or pandas.DataFrame
        The jobs, as for :func:`repeated_jobs`.
    job_id : int
        The job to place.
    tolerance : float, default 0.01
        As :func:`repeated_jobs`.
    by : sequence of str, default ("user", "app", "nprocs", "files")
        As :func:`repeated_jobs`.
    metrics : sequence of str, default DEFAULT_METRICS
        Metric columns to compare (those absent from ``data`` are skipped);
        default ``slowest_io_s``, ``mib_s``, ``mib_s_cn``, ``io_time_pct``,
        ``meta_time_pct`` and ``runtime_s``.
    cluster : {"auto", "never", "always"}, default "auto"
        As :func:`repeated_jobs`.
    procs_per_node : int, optional
        Passed to :func:`~iochar.analyze.jobs.job_metrics` for a store.

    Returns
    -------
    SimilarJobs
        The placement per metric and the group's history.

    Raises
    ------
    ParameterError
        ``job_id`` is not among the jobs, or an argument is out of range.
    """
    caller = "similar_jobs"
    check_int(job_id, "job_id", caller, "an int")
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise ParameterError("metrics", caller, "a sequence of metric column names", metrics)
    df = _frame(data, caller, procs_per_node=procs_per_node)
    if "job_id" not in df.columns or not (df["job_id"] == job_id).any():
        raise ParameterError("job_id", caller, "the id of a job in data", job_id)
    rep = repeated_jobs(df, tolerance, by=by, min_samples=1, cluster=cluster)
    mine = rep.members[rep.members["job_id"] == job_id]
    cols = [m for m in metrics if m in df.columns]
    if mine.empty:  # no I/O time: not grouped
        gid, mode, ids = None, None, [int(job_id)]
    else:
        gid = int(mine["group_id"].iloc[0])
        mode = str(mine["mode"].iloc[0])
        ids = rep.members.loc[rep.members["group_id"] == gid, "job_id"].tolist()
    keep = ["job_id"] + [c for c in ("start_ts",) if c in df.columns] + cols
    hist = df.loc[df["job_id"].isin(ids), keep].copy()
    if "start_ts" in hist:
        hist = hist.sort_values(["start_ts", "job_id"], na_position="last")
    hist["is_job"] = hist["job_id"] == job_id
    hist = hist.reset_index(drop=True)
    me = hist[hist["is_job"]]
    others = hist[~hist["is_job"]]
    rows = []
    for m in cols:  # a few metrics; numpy over the group's runs
        v = float(pd.to_numeric(me[m], errors="coerce").iloc[0])
        o = pd.to_numeric(others[m], errors="coerce").to_numpy(np.float64)
        o = o[np.isfinite(o)]
        n = len(o)
        note = ""
        mean = float(o.mean()) if n else np.nan
        std = float(o.std(ddof=1)) if n > 1 else np.nan
        if not np.isfinite(v):
            note = "the job has no value"
        elif n == 0:
            note = "no other run of this job"
        elif n == 1:
            note = "one other run: no spread"
        pct = 100 * (np.sum(o < v) + 0.5 * np.sum(o == v)) / n if n and np.isfinite(v) else np.nan
        flat = n > 1 and std <= 1e-12 * max(abs(mean), 1e-300)  # equal up to rounding
        z = (v - mean) / std if n > 1 and not flat and np.isfinite(v) else np.nan
        if flat and not note:
            note = "other runs all equal: z undefined"
        rows.append(
            {
                "metric": m,
                "value": v,
                "n": n,
                "mean": mean,
                "std": std,
                "min": float(o.min()) if n else np.nan,
                "median": float(np.median(o)) if n else np.nan,
                "max": float(o.max()) if n else np.nan,
                "percentile": pct,
                "z": z,
                "note": note,
            }
        )
    return SimilarJobs(int(job_id), gid, mode, pd.DataFrame(rows), hist)


def most_variable_job(repeated: RepeatedJobs, data) -> int | None:
    """The slowest run of the most variable group of repeated jobs (Carns et al. 2011).

    Table IV of Carns et al. (2011, section 4.1) ranks groups of repeated
    jobs by the coefficient of variation of the slowest rank's I/O time; the
    run of the most variable group that took longest is the outlier that
    makes it vary most, the job to place with :func:`similar_jobs`. Without
    groups, the first job with an I/O time (``repeated.members`` in
    ``job_id`` order), else the first job of ``data``.

    Parameters
    ----------
    repeated : RepeatedJobs
        :func:`repeated_jobs`'s result.
    data : iochar.Store, iochar.analyze.jobs.JobMetrics or pandas.DataFrame
        The jobs the groups were formed from, as for :func:`repeated_jobs`
        (with ``job_id`` and the ``repeated.time`` column [s]).

    Returns
    -------
    int or None
        A job id: the first of the slowest runs of the first group with the
        largest ``cv_pct`` [%] (None only when there are no jobs at all).

    Raises
    ------
    ParameterError
        ``repeated`` is not a RepeatedJobs, or ``data`` is not jobs.

    Examples
    --------
    >>> import pandas as pd
    >>> jobs = pd.DataFrame({"job_id": [1, 2, 3, 4], "user": "u", "app": "a",
    ...                      "nprocs": [8, 8, 16, 16], "files": 1, "bytes_read": 2**20,
    ...                      "bytes_written": 0, "slowest_io_s": [10.0, 11.0, 5.0, 20.0]})
    >>> most_variable_job(repeated_jobs(jobs), jobs)  # 5 s and 20 s vary most
    4
    """
    caller = "most_variable_job"
    if not isinstance(repeated, RepeatedJobs):
        raise ParameterError("repeated", caller, "a RepeatedJobs", type(repeated))
    df = _frame(data, caller)
    groups = repeated.groups
    cv = (
        pd.to_numeric(groups["cv_pct"], errors="coerce").astype("float64")
        if len(groups)
        else pd.Series([], dtype="float64")
    )
    if cv.notna().any():
        gid = groups["group_id"].iloc[int(np.nanargmax(cv.to_numpy()))]
        ids = repeated.members.loc[repeated.members["group_id"] == gid, "job_id"]
        runs = df[df["job_id"].isin(ids)]
        t = pd.to_numeric(runs[repeated.time], errors="coerce").astype("float64").to_numpy()
        return int(runs["job_id"].iloc[int(np.nanargmax(t))])
    if len(repeated.members):
        return int(repeated.members["job_id"].iloc[0])
    return int(df["job_id"].iloc[0]) if len(df) else None
