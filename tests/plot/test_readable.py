"""Charts a person can read (issue 16, items 3 and 4): human units, UTC time axes with
the date, lines broken at gaps, and a sentence instead of an empty or one-point chart.

Built from real inputs in data/ and rendered with vl-convert, as reports do.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import iochar
from iochar import plot
from iochar.analyze import bursts, snapshots
from iochar.analyze.throughput import throughput

pytest.importorskip("altair")
vlc = pytest.importorskip("vl_convert")

DATA = Path(__file__).resolve().parents[2] / "data"


def _texts(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _line_paths(svg: str) -> list[str]:
    """The ``d`` attribute of every line mark's path."""
    groups = re.findall(r'<g class="mark-line[^"]*"[^>]*>(.*?)</g>', svg, re.S)
    return [d for g in groups for d in re.findall(r' d="([^"]*)"', g)]


@pytest.fixture(scope="module")
def lmt():
    """The LMT record with a 3 min 20 s hole (07:35:45 to 07:39:05) and a counter reset."""
    with iochar.connect(":memory:") as db:
        db.load(DATA / "lmt" / "lmtdb-reset-ost.csv")
        return throughput(db)


def test_throughput_axis_in_mib_s_and_utc_with_the_date(lmt):
    chart = plot.throughput_chart(lmt)
    spec = chart.to_dict()
    inner = spec["spec"]["layer"][0]["encoding"]
    # before: y "per second" with ticks up to "160,000,000"; x ":30 :45 07:36 :15"
    assert inner["y"]["title"] == "rate [MiB/s]"
    assert inner["x"]["title"] == "time (UTC), 2018-04-18"
    assert inner["x"]["scale"]["type"] == "utc" and inner["x"]["axis"]["format"] == "%H:%M:%S"
    svg = vlc.vegalite_to_svg(chart.to_json())
    texts = _texts(svg)
    assert "rate [MiB/s]" in texts and "per second" not in texts
    assert {"read", "write"} <= set(texts)  # the rows: metrics without "_bytes"
    y_ticks = [t for t in texts if re.fullmatch(r"[\d,.]+", t)]
    assert y_ticks and max(float(t.replace(",", "")) for t in y_ticks) < 1024
    x_ticks = [t for t in texts if ":" in t and "UTC" not in t]
    assert x_ticks and all(re.fullmatch(r"07:[34]\d:\d\d", t) for t in x_ticks), x_ticks
    assert ".000000" not in svg
    # the scaled rate is the rate: 1 MiB/s = 2**20 B/s
    rows = pd.DataFrame(spec["datasets"][spec["data"]["name"]])
    peak = lmt.loc[lmt["metric"] == "write_bytes", "rate_per_s"].max()
    assert rows.loc[rows["metric"] == "write", "rate"].max() == pytest.approx(peak / 2**20)


def test_throughput_line_breaks_at_the_hole_in_the_record(lmt):
    chart = plot.throughput_chart(lmt)
    spec = chart.to_dict()
    rows = pd.DataFrame(spec["datasets"][spec["data"]["name"]])
    holes = rows[rows["rate"].isna()]
    # one null row per line, halfway through the 200-s step (median step 5 s)
    assert sorted(holes["metric"]) == ["read", "write"]
    assert (pd.to_datetime(holes["ts"]) == pd.Timestamp("2018-04-18 07:37:25", tz="UTC")).all()
    paths = _line_paths(vlc.vegalite_to_svg(chart.to_json()))
    assert len(paths) == 2  # read and write
    assert [d.count("M") for d in paths] == [2, 2]  # before: one path straight across


def test_burst_chart_breaks_at_the_gap_and_labels_its_threshold(lmt):
    s = bursts.aggregate(lmt)
    phases = bursts.segment(s)
    chart = plot.burst_chart(phases, s)
    svg = vlc.vegalite_to_svg(chart.to_json())
    thr = phases.evidence["threshold_per_s"] / 2**20
    label = f"burst threshold {thr:.3g} MiB/s (5% of peak)"
    assert label in _texts(svg) and "rate [MiB/s]" in _texts(svg)
    (path,) = _line_paths(svg)
    assert path.count("M") == 2
    # thinned to fewer points than samples, the hole still breaks the line
    thin = plot.burst_chart(phases, s, max_points=8).to_dict()
    line = thin["layer"][1]
    pts = thin["datasets"][line["data"]["name"]]
    assert any(p["rate"] is None for p in pts) and len(pts) <= 8 + 2


def test_iostat_throughput_in_one_binary_unit():
    with iochar.connect(":memory:") as db:
        db.load(DATA / "iostat" / "rhel8-sysstat11.7.3-x-t-m.iostat")
        df = throughput(db)
    chart = plot.throughput_chart(df)
    texts = _texts(vlc.vegalite_to_svg(chart.to_json()))
    # before: "per second", ticks 0 ... 800,000,000
    assert "rate [MiB/s]" in texts
    assert not [t for t in texts if re.fullmatch(r"\d{1,3}(,\d{3})+", t)]  # no raw byte counts
    assert "time (UTC), 2021-09-26" in texts


def test_size_cdf_ticks_in_binary_units_from_a_find_snapshot():
    with iochar.connect(":memory:") as db:
        db.load(DATA / "snapshot" / "tornado-after.find")
        sizes = snapshots.size_cdf(db, 0)
    chart = plot.size_cdf_chart(sizes)
    texts = _texts(vlc.vegalite_to_svg(chart.to_json()))
    assert "file size" in texts
    ticks = [t for t in texts if re.fullmatch(r"[\d.,]+ (B|KiB|MiB|GiB)", t)]
    assert {"1 KiB", "1 MiB"} <= set(ticks) and len(ticks) >= 4
    assert "1,000,000" not in texts  # before: file size [bytes] 1 ... 10,000,000


def test_fsu_and_cost_model_in_units():
    """The real ldiskfs series: bandwidth in a binary unit; the fio calibration's
    transfer sizes as KiB/MiB ticks."""
    from iochar.analyze.fsu import compare_bandwidth, fit_cost_model
    from iochar.load.bench import read_fio_json

    bench = read_fio_json(DATA / "fio" / "iochar-calibrate-vda-ext4.json")
    chart = plot.cost_model_chart(compare_bandwidth(fit_cost_model(bench), bench))
    texts = _texts(vlc.vegalite_to_svg(chart.to_json()))
    assert any(re.fullmatch(r"bandwidth \[(KiB|MiB|GiB)/s\]", t) for t in texts), texts
    assert any(re.fullmatch(r"\d+ (KiB|MiB)", t) for t in texts), texts


def test_time_axis_is_utc_whatever_the_local_zone(tmp_path):
    """Vega reads naive times as local time; charts send UTC instants on a UTC scale."""
    code = (
        "import iochar, re, vl_convert as vlc\n"
        "from iochar import plot\n"
        "from iochar.analyze.throughput import throughput\n"
        "db = iochar.connect(':memory:')\n"
        f"db.load({str(DATA / 'lmt' / 'lmtdb-reset-ost.csv')!r})\n"
        "svg = vlc.vegalite_to_svg(plot.throughput_chart(throughput(db)).to_json())\n"
        "print('|'.join(re.findall(r'<text[^>]*>(\\d\\d:\\d\\d:\\d\\d)</text>', svg)))\n"
    )
    env = {"TZ": "America/New_York", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    labels = out.stdout.strip().split("|")
    assert labels and all(t.startswith("07:") for t in labels), labels  # not 03:xx (EDT)


# --------------------------------------------------------------- nothing to draw


def test_one_sample_one_step_or_no_rows_give_a_sentence(lmt):
    one = lmt[lmt["ts"] == lmt["ts"].min()]
    nc = plot.throughput_chart(one)
    assert isinstance(nc, plot.NoChart)
    assert str(nc) == (
        "No throughput chart: only one sample (2018-04-18 07:35:20 UTC); a chart needs two."
    )
    assert isinstance(plot.throughput_chart(lmt.head(0)), plot.NoChart)
    s = bursts.aggregate(one)
    # a one-sample series cannot be segmented without sample_s; give it
    phases = bursts.segment(s, sample_s=5.0)
    assert "only one sample" in str(plot.burst_chart(phases, s))
    # a CDF of one size: one step
    cdf = pd.DataFrame(
        {"size_bytes": [4096], "files": [3], "bytes": [12288.0], "cdf_files": [1.0],
         "cdf_bytes": [1.0]}
    )  # fmt: skip
    step = plot.size_cdf_chart(cdf)
    assert isinstance(step, plot.NoChart)
    assert "all at 4 KiB, so the curve is a single step" in str(step)
    flat = pd.DataFrame({"rate_per_s": [5.0], "fraction_of_peak": [1.0], "share_of_time": [1.0]})
    assert "single step" in str(plot.throughput_cdf_chart(flat))


def test_empty_and_one_group_tables_give_a_sentence():
    groups = pd.DataFrame(
        {"group_id": [0], "app": ["ior"], "samples": [5], "mean_s": [7200.0],
         "std_s": [360.0], "cv_pct": [5.0]}
    )  # fmt: skip
    one = plot.cv_table_chart(groups)
    assert isinstance(one, plot.NoChart)
    assert "one group only (0: ior)" in str(one) and "5.0% CV" in str(one)
    assert "2.0 ± 0.1 h" in str(one)  # durations in h from 2 h up
    empty = plot.cv_table_chart(groups.head(0))
    assert str(empty) == "No repeated-job CV chart (Table IV): no group of repeated jobs."
    idle = pd.DataFrame(
        {"count": [0, 0], "minutes": [0.0, 0.0], "percent": [0.0, 0.0]},
        index=pd.Index(["1", "2-5"], name="duration_min"),
    )
    assert "no idle period" in str(plot.idle_table_chart(idle))


def test_real_zfs_brw_stats_fsu_is_one_interval():
    """The issue's FSU-over-time chart: one interval with a value, drawn as a lone dot."""
    from iochar.analyze.fsu import fsu_histogram, fsu_series, table_i_model

    with iochar.connect(":memory:") as db:
        db.load(DATA / "brw_stats" / "zfs-lustrefs-OST0000-series.txt")
        s = fsu_series(db, table_i_model())
    nc = plot.fsu_chart(s)
    assert isinstance(nc, plot.NoChart)
    assert re.fullmatch(
        r"No FSU-over-time chart: only one interval has an FSU value \([\d.]+% at "
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\); a line needs two\.",
        str(nc),
    ), str(nc)
    assert "only one FSU observation" in str(plot.fsu_histogram_chart(fsu_histogram(s)))


def test_no_chart_displays_as_its_sentence():
    from IPython.core.formatters import format_display_data

    nc = plot.NoChart("No chart: rate < 5% of peak & *no* [data].")
    data, _ = format_display_data(nc)
    assert data["text/plain"] == nc.reason  # IPython's plain view: the sentence, not a repr
    assert data["text/html"] == (
        '<p class="iochar-no-chart">No chart: rate &lt; 5% of peak &amp; *no* [data].</p>'
    )
    assert data["text/markdown"] == r"No chart: rate \< 5% of peak & \*no\* \[data\]."
    assert str(nc) == nc.reason and "NoChart(" in repr(nc)
    assert "NoChart" in plot.__all__
    with pytest.raises(iochar.errors.ParameterError):
        plot.NoChart("  ")


def test_report_page_shows_the_sentence_as_text():
    """What ``iochar report`` does with an executed cell's output: nbconvert's basic
    template keeps the escaped HTML paragraph."""
    import nbformat
    from IPython.core.formatters import format_display_data

    from iochar import report

    nc = plot.NoChart("No FSU-over-time chart: only one interval has an FSU value <1>.")
    data, meta = format_display_data(nc)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plot.fsu_chart(usage)")
    cell.outputs = [
        nbformat.v4.new_output("execute_result", data=data, metadata=meta, execution_count=1)
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# FSU"), cell]
    page = report.to_html(nb, title="t")
    assert (
        '<p class="iochar-no-chart">No FSU-over-time chart: only one interval has an FSU '
        "value &lt;1&gt;.</p>"
    ) in page
    assert "NoChart(" not in page


@pytest.mark.notebooks
def test_executed_notebook_shows_the_sentence(tmp_path):
    """A notebook whose last expression is a NoChart, executed by a real kernel."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import pandas as pd\nfrom iochar import plot\n"
            "plot.cv_table_chart(pd.DataFrame(columns=['group_id', 'samples', 'mean_s', "
            "'std_s', 'cv_pct']))"
        )
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {}}).execute()
    from iochar import report

    out = nb.cells[0].outputs[0]
    assert out.output_type == "execute_result"
    sentence = "No repeated-job CV chart (Table IV): no group of repeated jobs."
    assert out.data["text/plain"] == sentence
    assert sentence in out.data["text/markdown"]
    assert f'<p class="iochar-no-chart">{sentence}</p>' in report.to_html(nb, title="t")
