"""Charts build from analysis results and render offline."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from iochar.errors import ParameterError

alt = pytest.importorskip("altair")

from iochar.plot import throughput_chart  # noqa: E402


def _df():
    t0 = dt.datetime(2024, 1, 1)
    return pd.DataFrame(
        {
            "target": ["sda", "sda", "sdb"],
            "metric": ["read_bytes"] * 3,
            "ts": [t0, t0 + dt.timedelta(seconds=5), t0],
            "rate_per_s": [1.0, 2.0, 3.0],
            "flagged": [False, True, False],
        }
    )


def test_throughput_chart_spec():
    spec = throughput_chart(_df(), title="x").to_dict()
    assert spec["facet"]["row"]["field"] == "metric"
    layers = spec["spec"]["layer"]
    assert [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in layers
    ] == ["line", "point"]


def test_throughput_chart_needs_columns():
    with pytest.raises(ParameterError, match="missing"):
        throughput_chart(pd.DataFrame({"ts": []}))


def test_renders_offline_to_svg():
    vlc = pytest.importorskip("vl_convert")
    svg = vlc.vegalite_to_svg(throughput_chart(_df()).to_dict())
    assert svg.startswith("<svg") and "sda" in svg


def test_class_charts_render(store):
    from pathlib import Path

    from iochar.analyze.classify import class_breakdown, class_rate, classify
    from iochar.plot import class_breakdown_chart, class_rate_chart

    vlc = pytest.importorskip("vl_convert")
    store.load(Path(__file__).resolve().parents[2] / "data" / "strace" / "ckpt_tt.strace")
    cr = class_rate(store, job_id=0, bin_s=1.0)
    bd = class_breakdown_chart(class_breakdown(classify(store)))
    for chart in (class_rate_chart(cr), bd):
        assert vlc.vegalite_to_svg(chart.to_dict()).startswith("<svg")
    # the breakdown is by bytes, by operations and by files
    assert {r["by"] for r in bd.data.to_dict("records")} == {
        "by bytes", "by operations", "by files"
    }  # fmt: skip


def test_snapshot_cdf_charts_render(store):
    from pathlib import Path

    from iochar import plot
    from iochar.analyze import snapshots as S
    from iochar.plot import age_cdf_chart, size_cdf_chart

    vlc = pytest.importorskip("vl_convert")
    store.load(Path(__file__).resolve().parents[2] / "data" / "snapshot" / "tornado-after.find")
    sizes = S.size_cdf(store, 0)
    chart = size_cdf_chart(sizes)
    spec = chart.to_dict()
    assert spec["encoding"]["x"]["scale"]["type"] == "log"
    assert vlc.vegalite_to_svg(spec).startswith("<svg")
    # every file of this snapshot is 105 min old (or newer than it): one step, a sentence
    ages = age_cdf_chart(S.age_cdf(store, 0))
    assert isinstance(ages, plot.NoChart) and "single step" in str(ages)


def _minute_series():
    import numpy as np

    return pd.Series(
        [0.0, 100, 90, 0, 0, np.nan, 0, 50],
        index=pd.date_range("2024-01-01 00:01", periods=8, freq="1min"),
    )


def test_burst_chart_shades_phases_and_draws_threshold():
    from iochar.analyze.bursts import segment
    from iochar.plot import burst_chart

    s = _minute_series()
    phases = segment(s)
    spec = burst_chart(phases, s).to_dict()
    rect, line, rule, label = spec["layer"]
    assert rect["mark"]["type"] == "rect" and rect["encoding"]["x"]["type"] == "temporal"
    assert line["mark"]["interpolate"] == "step-before"  # a rate holds over (ts - interval, ts]
    assert rule["mark"]["type"] == "rule" and label["mark"]["type"] == "text"
    datasets = spec["datasets"]
    shaded = datasets[rect["data"]["name"]]
    assert [d["phase"] for d in shaded] == ["burst", "gap", "burst"]  # idle is not shaded
    # the rule is labelled with the threshold in the chart's unit (peak 100 B/s: B/s)
    assert datasets[rule["data"]["name"]] == [
        {"threshold": 5.0, "label": "burst threshold 5 B/s (5% of peak)"}
    ]
    vlc = pytest.importorskip("vl_convert")
    assert vlc.vegalite_to_svg(spec).startswith("<svg")


def test_burst_chart_thins_long_series_keeping_peaks():
    import numpy as np

    from iochar.analyze.bursts import segment
    from iochar.plot import burst_chart

    v = np.zeros(20_000)
    v[12_345] = 1000.0
    s = pd.Series(v, index=np.arange(1, 20_001) * 5.0)
    spec = burst_chart(segment(s), s, max_points=500).to_dict()
    line = spec["layer"][1]
    pts = spec["datasets"][line["data"]["name"]]
    assert len(pts) <= 500 and max(p["rate"] for p in pts) == 1000.0  # [B/s]
    assert line["encoding"]["x"]["type"] == "quantitative"
    with pytest.raises(ParameterError, match="max_points"):
        burst_chart(segment(s), s, max_points=1)
    with pytest.raises(ParameterError, match="missing"):
        burst_chart(pd.DataFrame({"state": []}), s)


def test_idle_table_chart_and_style():
    from iochar.analyze.bursts import idle_table
    from iochar.plot import idle_table_chart, idle_table_style

    t = idle_table(_minute_series())
    spec = idle_table_chart(t).to_dict()
    bars = spec["layer"][0]
    assert bars["encoding"]["y"]["sort"] == [
        "1",
        "2-5",
        "6-10",
        "11-20",
        "21-30",
        "31-40",
        "41-50",
        "51-60",
        ">60",
    ]
    vlc = pytest.importorskip("vl_convert")
    assert vlc.vegalite_to_svg(spec).startswith("<svg")
    html = idle_table_style(t).to_html()
    assert "Cumulative Minutes" in html and "Percentage of Total Time" in html
    assert "below 5% of peak" in html and "gaps of 60 s not counted" in html
    assert "rate below 5 B/s" in html  # the threshold used, not the peak


def test_throughput_cdf_chart_thins_to_exact_steps():
    import numpy as np

    from iochar.analyze.bursts import throughput_cdf
    from iochar.plot import throughput_cdf_chart

    rng = np.random.default_rng(0)
    s = pd.Series(rng.exponential(1.0, 10_000), index=np.arange(1, 10_001) * 60.0)
    cdf = throughput_cdf(s)
    spec = throughput_cdf_chart(cdf, max_points=300).to_dict()
    pts = spec["datasets"][spec["data"]["name"]]
    assert len(pts) <= 300 and pts[-1]["share_of_time"] == 1.0
    exact = dict(zip(cdf["fraction_of_peak"], cdf["share_of_time"], strict=True))
    assert all(exact[p["fraction_of_peak"]] == p["share_of_time"] for p in pts)
    vlc = pytest.importorskip("vl_convert")
    assert vlc.vegalite_to_svg(spec).startswith("<svg")


def _periodic_signal(n=20000, period=125.0):
    import numpy as np

    rng = np.random.default_rng(0)
    x = np.where((np.arange(n) % period) < 0.1 * period, 5.0, 0.0)
    return x + rng.normal(0, 0.5, n)


def test_periodogram_chart_marks_the_detected_periods():
    import numpy as np

    from iochar.analyze.cycles import find_periods
    from iochar.plot import periodogram_chart

    res = find_periods(_periodic_signal())
    spec = periodogram_chart(res, max_points=500).to_dict()
    layers = spec["layer"]
    assert [ly["mark"]["type"] for ly in layers] == ["line", "line", "rule", "text"]
    assert layers[0]["encoding"]["x"]["scale"]["type"] == "log"
    data = spec["datasets"]
    line_pts = data[layers[0]["data"]["name"]]
    rule_pts = data[layers[2]["data"]["name"]]
    assert len(line_pts) <= 500
    assert [p["period_s"] for p in rule_pts] == res.periods["period_s"].tolist()
    # thinning keeps the peak: the strongest plotted line is the detected period
    top = max(line_pts, key=lambda p: p["power"])
    assert np.isclose(top["period_s"], 125.0, rtol=0.02)
    vlc = pytest.importorskip("vl_convert")
    assert vlc.vegalite_to_svg(spec).startswith("<svg")


def test_periodogram_chart_without_periods_and_bad_input():
    import numpy as np

    from iochar.analyze.cycles import find_periods
    from iochar.plot import periodogram_chart

    res = find_periods(np.random.default_rng(1).normal(size=3000))
    assert res.periods.empty
    vlc = pytest.importorskip("vl_convert")
    assert vlc.vegalite_to_svg(periodogram_chart(res).to_dict()).startswith("<svg")
    with pytest.raises(ParameterError, match="PeriodResult"):
        periodogram_chart(res.spectrum)
    with pytest.raises(ParameterError, match="max_points"):
        periodogram_chart(res, max_points=1)


def test_cycles_chart_renders():
    from iochar.analyze.cycles import split_cycles
    from iochar.plot import cycles_chart

    res = split_cycles(_periodic_signal(5000), 125.0)
    spec = cycles_chart(res).to_dict()
    bars = spec["layer"][0]
    assert bars["mark"]["type"] == "rect" and bars["encoding"]["color"]["field"] == "similarity"
    assert len(spec["datasets"][bars["data"]["name"]]) == len(res.cycles)
    assert "2.08 min" in spec["title"]  # 125 s, in min from 2 min up
    vlc = pytest.importorskip("vl_convert")
    assert vlc.vegalite_to_svg(spec).startswith("<svg")
    with pytest.raises(ParameterError, match="CycleResult"):
        cycles_chart(res.cycles)


# --- job metrics and repeated jobs (Carns et al. 2011, Fig. 11, Table IV) ----------------


@pytest.fixture(scope="module")
def repeated_results(tmp_path_factory):
    """Job metrics, repeated jobs and one job's placement, from a small synth trace."""
    import iochar
    from iochar.analyze.jobs import job_metrics
    from iochar.analyze.variance import repeated_jobs, similar_jobs
    from iochar.datasets.synth_jobs import JobGroup, make_population, write_trace

    mib = 1 << 20
    groups = [
        JobGroup("A", app="earth", uid=1, nprocs=8, files=8, read_bytes=8 * mib,
                 write_bytes=mib, mean_io_s=40.0, cv=0.2, samples=12, write_files=2),
        JobGroup("B", app="nuclear0", uid=2, nprocs=4, files=4, read_bytes=4 * mib,
                 write_bytes=0, mean_io_s=23.1, cv=0.921, samples=12, pattern="rank0"),
        JobGroup("C", app="climate", uid=3, nprocs=4, files=2, read_bytes=4 * mib,
                 write_bytes=4 * mib, mean_io_s=72.0, cv=0.079, samples=6, pattern="N:1"),
    ]  # fmt: skip
    pop = make_population(groups, random_state=0)
    db = iochar.connect(":memory:")
    db.load(write_trace(pop, tmp_path_factory.mktemp("plot_jobs") / "jobs.parquet"))
    m = job_metrics(db, procs_per_node=4)
    rep = repeated_jobs(m)
    slowest = int(m.jobs.sort_values("slowest_io_s")["job_id"].iloc[-1])
    return m, rep, similar_jobs(m, slowest)


def test_repeated_job_charts_render_offline(repeated_results):
    from iochar.plot import cv_table_chart, cv_table_style, job_history_chart, mib_s_box_chart

    vlc = pytest.importorskip("vl_convert")
    m, rep, sim = repeated_results
    box = mib_s_box_chart(m).to_dict()
    assert box["mark"] == {"type": "boxplot", "extent": "min-max"}  # Fig. 11: min to max
    assert box["encoding"]["x"]["scale"]["type"] == "log"
    svg = vlc.vegalite_to_svg(box)
    assert svg.startswith("<svg") and "nuclear0" in svg and "MiB/s/CN" in svg
    cv = cv_table_chart(rep.groups).to_dict()
    rows = cv["datasets"][cv["data"]["name"]]
    assert len(rows) == len(rep.groups) and {"cv_pct", "text"} <= set(rows[0])
    assert vlc.vegalite_to_svg(cv).startswith("<svg")
    html = cv_table_style(rep.groups).to_html()
    assert "CV" in html and "MiB rd" in html and "%" in html  # 1-8 MiB per group
    hist = job_history_chart(sim).to_dict()
    assert "percentile 100" in hist["title"] and "z = +" in hist["title"]
    svg = vlc.vegalite_to_svg(hist)
    assert svg.startswith("<svg") and "slowest_io_s" in svg


def test_repeated_job_charts_check_their_input(repeated_results):
    from iochar.plot import cv_table_chart, job_history_chart, mib_s_box_chart

    m, rep, sim = repeated_results
    with pytest.raises(ParameterError, match="missing"):
        mib_s_box_chart(m.jobs.drop(columns="mib_s_cn"))
    with pytest.raises(ParameterError, match="'label' parameter"):
        cv_table_chart(rep.groups, label="project")
    with pytest.raises(ParameterError, match="SimilarJobs"):
        job_history_chart(rep)
    with pytest.raises(ParameterError, match="'metric' parameter"):
        job_history_chart(sim, metric="files")


# --------------------------------------------------------------------------- FSU charts


@pytest.fixture
def fsu_results(store):
    """Two OSTs, 40 one-minute intervals of 4 KiB and 1 MiB writes and reads, one reset."""
    import numpy as np
    import pyarrow as pa

    from iochar.analyze import fsu

    rng = np.random.default_rng(7)
    rows = []
    t0 = dt.datetime(2012, 10, 22)
    for tgt in ("OST0000", "OST0001"):
        for k in range(1, 41):
            ts = t0 + dt.timedelta(minutes=k)
            for op in ("read", "write"):
                for size in (4096, 1 << 20):
                    q = "reset" if (tgt, k) == ("OST0001", 20) else "ok"
                    rows.append(
                        (tgt, ts, 60.0, "disk I/O size", op, size, int(rng.poisson(300)), q)
                    )
    cols = ["target", "ts", "interval_s", "section", "op", "size_bytes", "count", "quality"]
    store.con.register("_f", pa.Table.from_pandas(pd.DataFrame(rows, columns=cols)))
    store.con.execute(f"INSERT INTO size_hist ({', '.join(cols)}) SELECT * FROM _f")
    series = fsu.fsu_series(store, fsu.table_i_model())
    return series, fsu.size_histogram(store)


def test_fsu_chart_two_axes_and_renders(fsu_results):
    from iochar.plot import FSU_COLORS, fsu_chart

    vlc = pytest.importorskip("vl_convert")
    series, _ = fsu_results
    spec = fsu_chart(series).to_dict()  # two targets: averaged first (section V)
    lines, fsu_line = spec["layer"]
    assert spec["resolve"]["scale"]["y"] == "independent"
    assert fsu_line["encoding"]["y"]["axis"]["orient"] == "right"
    assert fsu_line["mark"]["color"] == FSU_COLORS["FSU"]
    assert lines["encoding"]["color"]["scale"]["range"][:2] == ["#d62728", "#1f77b4"]
    pts = spec["datasets"][fsu_line["data"]["name"]]
    assert len(pts) == 40
    svg = vlc.vegalite_to_svg(spec)
    assert svg.startswith("<svg") and "FSU [%]" in svg
    thin = fsu_chart(series, max_points=10).to_dict()
    assert len(thin["datasets"][thin["layer"][1]["data"]["name"]]) <= 10
    with pytest.raises(ParameterError, match="max_points"):
        fsu_chart(series, max_points=1)
    with pytest.raises(ParameterError, match="missing"):
        fsu_chart(series.drop(columns="fsu_pct"))


def test_fsu_chart_with_counter_bandwidth(fsu_results):
    from iochar.plot import fsu_chart

    vlc = pytest.importorskip("vl_convert")
    series, _ = fsu_results
    one = series[series["target"] == "OST0000"]
    bw = pd.DataFrame(
        {
            "target": "OST0000",
            "metric": ["read_bytes", "write_bytes"] * len(one),
            "ts": one["ts"].repeat(2).to_numpy(),
            "rate_per_s": 1 << 20,
        }
    )
    spec = fsu_chart(one, bandwidth=bw).to_dict()
    assert "counters" in spec["layer"][0]["encoding"]["y"]["title"]
    assert vlc.vegalite_to_svg(spec).startswith("<svg")


def test_fsu_histogram_and_size_histogram_charts(fsu_results):
    from iochar.analyze.fsu import fsu_histogram
    from iochar.plot import cost_model_chart, fsu_histogram_chart, size_histogram_chart

    vlc = pytest.importorskip("vl_convert")
    series, sizes = fsu_results
    h = fsu_histogram(series)
    spec = fsu_histogram_chart(h).to_dict()
    bars = spec["datasets"][spec["data"]["name"]]
    assert len(bars) == 101 and bars[-1]["overflow"].startswith("overflow")
    assert bars[-1]["bin_hi"] == 202.0  # drawn one bin past 200%
    assert vlc.vegalite_to_svg(spec).startswith("<svg")
    spec = size_histogram_chart(sizes).to_dict()
    assert spec["encoding"]["x"]["sort"] == ["4 KiB", "1 MiB"]
    assert spec["encoding"]["xOffset"]["field"] == "op"
    assert vlc.vegalite_to_svg(spec).startswith("<svg")
    with pytest.raises(ParameterError, match="missing"):
        size_histogram_chart(sizes.drop(columns="count"))
    from pathlib import Path

    from iochar.analyze.fsu import compare_bandwidth, fit_cost_model
    from iochar.load.bench import read_fio_json

    fio = Path(__file__).resolve().parents[2] / "data" / "fio" / "iochar-calibrate-vda-ext4.json"
    bench = read_fio_json(fio)
    spec = cost_model_chart(compare_bandwidth(fit_cost_model(bench), bench)).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["scale"] == {"type": "log", "base": 2}
    assert vlc.vegalite_to_svg(spec).startswith("<svg")


def test_overview_charts_render_from_real_inputs(store):
    from pathlib import Path

    from iochar import plot
    from iochar.analyze import characterize, inventory

    data = Path(__file__).resolve().parents[2] / "data"
    for rel in (
        "lmt/lmtdb-reset-ost.csv",
        "strace/ckpt_tt.strace",
        "trace/ior-hdf5-dxt-posix.csv",
        "snapshot/tornado-before.find",
    ):
        store.load(data / rel)
    vlc = pytest.importorskip("vl_convert")
    cov = inventory.coverage(store)
    spec = plot.coverage_chart(cov).to_dict()
    rows = next(iter(spec["datasets"].values()))
    by = {r["source"]: r for r in rows}
    lmt = cov[cov["kind"] == "lmt"].iloc[0]
    assert by["lmtdb-reset-ost.csv"]["span_s"] == (lmt["end"] - lmt["start"]).total_seconds()
    assert by["tornado-before.find"]["span_s"] == 1.0  # an instant, drawn at 1 s
    assert vlc.vegalite_to_svg(plot.coverage_chart(cov).to_json()).startswith("<svg")
    jobs = characterize.app_table(store)
    chart = plot.job_bytes_chart(jobs, top=2)
    rows = next(iter(chart.to_dict()["datasets"].values()))
    top = jobs.nlargest(2, "io_bytes")
    assert len(rows) == 2 and [r["io_bytes"] for r in rows] == top["io_bytes"].tolist()
    assert vlc.vegalite_to_svg(chart.to_json()).startswith("<svg")
    one = plot.job_bytes_chart(jobs, top=1)  # one bar: a sentence instead
    assert isinstance(one, plot.NoChart) and "one job only" in str(one)
    with pytest.raises(ParameterError):
        plot.job_bytes_chart(jobs.drop(columns="basis"))


def test_cv_table_style_with_two_groups_of_one_app(repeated_results):
    """EarthScience A and B (Table IV): one app, two groups; the styler must not choke."""
    from iochar.plot import cv_table_style

    m, rep, sim = repeated_results
    g = rep.groups.copy()
    g["app"] = g["app"].iloc[0]
    g["user"] = g["user"].iloc[0] if "user" in g else None
    html = cv_table_style(g).to_html()
    for cv in g["cv_pct"]:
        assert f"{cv:.1f}%" in html


def test_cdf_charts_thin_long_cdfs_keeping_exact_steps():
    import numpy as np

    from iochar.plot import age_cdf_chart, size_cdf_chart

    rng = np.random.default_rng(0)
    sizes = np.unique(rng.lognormal(10, 3, 50_000).astype(np.int64) + 1)
    n = len(sizes)
    df = pd.DataFrame(
        {
            "size_bytes": sizes,
            "cdf_files": np.arange(1, n + 1) / n,
            "cdf_bytes": np.cumsum(sizes) / sizes.sum(),
        }
    )
    spec = size_cdf_chart(df, max_points=500).to_dict()
    rows = pd.DataFrame(next(iter(spec["datasets"].values())))
    assert n > 10_000 and len(rows) <= 2 * 502
    # every drawn point is a real step of the CDF, first and last kept
    files = rows[rows["by"] == "by file count"].set_index("size_bytes")["value"]
    truth = df.set_index("size_bytes")["cdf_files"]
    assert (files == truth.loc[files.index]).all()
    assert files.index.min() == sizes[0] and files.index.max() == sizes[-1]
    # the largest gap between kept points is one grid step (log-spaced)
    ratio = np.diff(np.log(files.index.to_numpy(dtype=float))).max()
    assert ratio <= np.log(sizes[-1] / sizes[0]) / 499 + np.diff(np.log(sizes.astype(float))).max()
    ages = df.rename(columns={"size_bytes": "age_days"})
    ages["age_days"] = ages["age_days"] / 1e3
    assert (
        len(next(iter(age_cdf_chart(ages, max_points=300).to_dict()["datasets"].values()))) <= 604
    )
    small = df.head(100)
    assert len(next(iter(size_cdf_chart(small).to_dict()["datasets"].values()))) == 200


def test_fsu_chart_real_brw_stats_lone_interval_and_reset(fsu_results):
    """The real ZFS series: one used interval and one counter reset. One FSU value draws
    no line: a sentence gives it instead. A reset interval has neither FSU nor
    bandwidth, and the lines break there."""
    from pathlib import Path

    import iochar
    from iochar.analyze.fsu import fsu_series, table_i_model
    from iochar.plot import NoChart, fsu_chart

    series, _ = fsu_results
    data = Path(__file__).resolve().parents[2] / "data" / "brw_stats"
    with iochar.connect(":memory:") as db:  # the fixture's store holds synthetic OSTs
        db.load(data / "zfs-lustrefs-OST0000-series.txt")
        s = fsu_series(db, table_i_model())
    assert s["fsu_pct"].notna().sum() == 1 and (s["reason"] != "").sum() == 1
    lone = fsu_chart(s)
    assert isinstance(lone, NoChart)
    assert "only one interval has an FSU value" in str(lone) and " UTC" in str(lone)
    # the synthetic OST0001 has a reset at minute 20: no bandwidth there, lines broken
    one = series[series["target"] == "OST0001"]
    spec = fsu_chart(one).to_dict()
    lines, fsu_line = spec["layer"]
    bw = pd.DataFrame(spec["datasets"][lines["data"]["name"]])
    reset_ts = one.loc[one["reason"] != "", "ts"].iloc[0]
    at_reset = bw[pd.to_datetime(bw["ts"]).dt.tz_localize(None) == reset_ts]
    assert len(at_reset) == 2 and at_reset["rate"].isna().all()
    used = one.loc[one["reason"] == ""].iloc[0]
    at_used = bw[pd.to_datetime(bw["ts"]).dt.tz_localize(None) == used["ts"]].set_index("op")
    unit = lines["encoding"]["y"]["title"].split("[")[1].split("]")[0]
    size = {"KiB/s": 2**10, "MiB/s": 2**20, "GiB/s": 2**30}[unit]
    want = used["write_bytes"] / used["interval_s"] / size
    assert at_used.loc["write", "rate"] == pytest.approx(want)
