"""Open a page in headless Chromium the way a reader does, and say what they would see.

A small Chrome DevTools Protocol client (websocket-client, which Jupyter already
needs): Chromium runs headless with every request leaving the machine blocked,
the page loads from a ``file://`` URL at a given window width, and the page's
own DOM answers what a reader would notice: headings, leaked missing-value
tokens in the visible text, horizontal overflow, charts without drawn marks,
console errors and attempted network requests. A screenshot is saved when asked.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Tokens a reader should never see in a report: Python/pandas missing values and reprs.
LEAK_PATTERN = (
    r"(?<![A-Za-z])(NaN|nan%?|None|NaT|<NA>|inf|-inf|Infinity)(?![A-Za-z])"
    r"|<[a-zA-Z_.]+ object at 0x|\bdtype:|Timestamp\("
)

# What the page is asked; everything runs in the page, nothing is injected into it.
_PROBE = r"""
(() => {
  const text = document.body ? document.body.innerText : "";
  const re = new RegExp(%s, "g");
  const leaks = [];
  for (const line of text.split("\n")) {
    const m = line.match(re);
    if (m) for (const t of m) leaks.push([t, line.trim().slice(0, 160)]);
  }
  const charts = [];
  for (const el of document.querySelectorAll("svg, canvas, img[src^='data:image/svg']")) {
    if (el.closest("svg") && el.closest("svg") !== el) continue;  // nested svg
    const r = el.getBoundingClientRect();
    if (r.width < 40 || r.height < 40) continue;  // icons
    let marks = 0;
    if (el.tagName.toLowerCase() === "svg")
      marks = el.querySelectorAll("path, rect, circle, line, polygon, text").length;
    else marks = 1;
    charts.push({tag: el.tagName.toLowerCase(), width: r.width, height: r.height, marks});
  }
  return {
    title: document.title,
    h1: Array.from(document.querySelectorAll("h1")).map(h => h.innerText.trim()),
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    leaks,
    charts,
    text: text.slice(0, 200000),
  };
})()
"""


@dataclass
class PageReport:
    """What a reader of one page would see (from :func:`open_page`)."""

    url: str
    title: str = ""
    h1: list[str] = field(default_factory=list)
    scroll_width: int = 0
    inner_width: int = 0
    leaks: list[tuple[str, str]] = field(default_factory=list)
    charts: list[dict] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    requests_out: list[str] = field(default_factory=list)
    text: str = ""
    screenshot: Path | None = None

    @property
    def overflow_px(self) -> int:
        """How far the page is wider than the window [px] (0: no horizontal scroll)."""
        return max(0, self.scroll_width - self.inner_width)

    @property
    def empty_charts(self) -> list[dict]:
        """Charts with no drawn marks."""
        return [c for c in self.charts if c["marks"] == 0]


def chromium() -> str | None:
    """The Chromium binary, or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """Headless Chromium driven over the DevTools protocol, offline but for loopback.

    Every host name but 127.0.0.1 fails to resolve (as on a login node without
    internet), so ``file://`` pages and a local server load and nothing else does.

    Parameters
    ----------
    width, height : int
        Window size [px].
    timeout_s : float, default 60
        How long one protocol call may wait [s].
    """

    def __init__(self, *, width: int = 1280, height: int = 1800, timeout_s: float = 60) -> None:
        try:
            import websocket  # websocket-client (Jupyter's server needs it too)
        except ImportError as exc:
            from iochar.errors import MissingDependencyError

            raise MissingDependencyError(
                "websocket-client", "report", "checking pages in Chromium"
            ) from exc
        exe = chromium()
        if exe is None:
            raise RuntimeError("Chromium is not installed")
        self.profile = tempfile.mkdtemp(prefix="iochar-chromium-")
        self.proc = subprocess.Popen(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port_file = Path(self.profile) / "DevToolsActivePort"
            for _ in range(400):
                if port_file.exists() and port_file.read_text().count("\n") >= 1:
                    break
                time.sleep(0.05)
            port = int(port_file.read_text().split("\n")[0])
            import urllib.request

            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                page = next(t for t in json.load(r) if t.get("type") == "page")
            self.ws = websocket.create_connection(
                page["webSocketDebuggerUrl"], timeout=timeout_s, suppress_origin=True
            )
        except BaseException:
            self._stop()
            raise
        self.timeout_s = timeout_s
        self.next_id = 0
        self.events: list[dict] = []
        for domain in ("Network", "Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, **params) -> dict:
        """One protocol call; events that arrive meanwhile are kept in ``events``."""
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def js(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        got = self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in got:
            raise RuntimeError(got["exceptionDetails"])
        return got["result"].get("value")

    def wait_for(self, expression: str, seconds: float = 120):
        """Poll ``expression`` until it is truthy; its value (TimeoutError after ``seconds``)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if value := self.js(expression):
                return value
            time.sleep(0.25)
        raise TimeoutError(expression)

    def drain(self, seconds: float) -> None:
        """Collect events for ``seconds`` (scripts that run after the load event)."""
        self.ws.settimeout(0.2)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self.events.append(json.loads(self.ws.recv()))
            except Exception:  # timeout: nothing more yet
                continue
        self.ws.settimeout(self.timeout_s)

    def load(self, url: str, settle_s: float = 2.0) -> None:
        """Open ``url`` and wait for its load event, then ``settle_s`` more [s]."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(e.get("method") == "Page.loadEventFired" for e in self.events):
                break
            self.drain(0.2)
        self.drain(settle_s)

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions so far (failed loads are in requests_out)."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(d.get("exception", {}).get("description") or d.get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append(" ".join(str(a.get("value", "")) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                if p["entry"].get("source") != "network":  # a failed load: requests_out
                    out.append(p["entry"].get("text", ""))
        return out

    def requests_out(self) -> list[str]:
        """URLs the page asked for that would leave the machine."""
        local = ("http://127.0.0.1:", "ws://127.0.0.1:", "file:", "data:", "blob:", "about:")
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
            and not e["params"]["request"]["url"].startswith(local)
        ]

    def screenshot(self, path: str | Path, *, full_page: bool = False) -> Path:
        """A PNG of the window, or of the whole page (up to 16,000 px high)."""
        params: dict = {"format": "png"}
        if full_page:
            metrics = self.call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params |= {
                "captureBeyondViewport": True,
                "clip": {
                    "x": 0,
                    "y": 0,
                    "width": size["width"],
                    "height": min(size["height"], 16000),
                    "scale": 1,
                },
            }
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", **params)["data"]))
        return out

    def _stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)

    def close(self) -> None:
        """Close the connection, stop Chromium, remove its profile."""
        self.ws.close()
        self._stop()


def open_page(
    path: str | Path,
    *,
    width: int = 1280,
    height: int = 1800,
    screenshot: str | Path | None = None,
    settle_s: float = 2.0,
) -> PageReport:
    """Load ``path`` in headless Chromium with the network blocked; report what shows.

    Parameters
    ----------
    path : str or Path
        An HTML file.
    width, height : int
        Window size [px].
    screenshot : str or Path, optional
        Save a PNG of the full page here.
    settle_s : float
        Time for scripts (chart renderers) to run after the load event [s].

    Returns
    -------
    PageReport
    """
    url = Path(path).resolve().as_uri()
    with Browser(width=width, height=height) as b:
        b.load(url, settle_s)
        v = b.js(_PROBE % json.dumps(LEAK_PATTERN))
        rep = PageReport(
            url=url,
            title=v["title"],
            h1=v["h1"],
            scroll_width=int(v["scrollWidth"]),
            inner_width=int(v["innerWidth"]),
            leaks=[tuple(x) for x in v["leaks"]],
            charts=v["charts"],
            text=v["text"],
            console_errors=b.errors(),
            requests_out=b.requests_out(),
        )
        if screenshot is not None:
            rep.screenshot = b.screenshot(screenshot, full_page=True)
    return rep


if __name__ == "__main__":  # python -m iochar.report.browser PAGE.html [...]: a quick look
    import sys

    for page in sys.argv[1:]:
        shot = os.path.splitext(page)[0] + ".png"
        r = open_page(page, screenshot=shot)
        sys.stdout.write(
            f"{page}: h1={len(r.h1)} overflow={r.overflow_px}px leaks={len(r.leaks)} "
            f"charts={len(r.charts)} empty={len(r.empty_charts)} "
            f"errors={len(r.console_errors)} out={len(r.requests_out)}\n"
        )
        for tok, line in r.leaks[:20]:
            sys.stdout.write(f"   leak {tok!r}: {line}\n")
