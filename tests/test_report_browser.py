"""The report in a real browser: headless Chromium loads it with no script error and draws the charts.

Needs Debian's ``chromium`` (``apt-get install -y chromium``); skipped with the reason when it is absent.
The page is opened from a file with networking disabled, so it also proves the report needs no network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

import metrics_fixture
from spadework.analysis import report

CHROMIUM = os.environ.get("SPADEWORK_CHROMIUM", "/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) or shutil.which("chromium")),
    reason="headless Chromium not installed (Debian package 'chromium'; CI installs it)",
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
]


def chromium(tmp_path, url: str, *extra: str) -> subprocess.CompletedProcess:
    exe = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    cmd = [exe, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=15000", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    con = metrics_fixture.build(evil_name=True)
    live = report.build_report(con, tmp_path_factory.mktemp("live"))
    static = report.build_report(con, tmp_path_factory.mktemp("static"), interactive=False)
    con.close()
    return live, static


def test_report_loads_without_script_errors_and_draws_charts(pages, tmp_path):
    live, _ = pages
    run = chromium(tmp_path, live.as_uri(), "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    body = re.findall(r"<body[^>]*>", dom)[-1]  # (the inlined Vega bundle holds the string "<body>" too)
    assert 'data-charts-rendered="6"' in body and 'data-charts-failed="0"' in body, body
    assert "data-script-errors" not in body, body
    messages = console_messages(run.stderr)
    assert not [m for m in messages if "Uncaught" in m or "Error" in m or "Refused" in m], messages
    # every chart div now holds an SVG drawn by Vega
    charts = re.findall(r'<div class="chart[^"]*"[^>]*data-rendered="true"[^>]*>(.*?)</figure>', dom, re.S)
    assert len(charts) == 6 and all("<svg" in c for c in charts)
    # the player called <script>alert(1)</script> stayed text
    assert "<script>alert(1)</script>" not in dom and "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


def test_static_report_loads_and_shows_charts(pages, tmp_path):
    _, static = pages
    run = chromium(tmp_path, static.as_uri(), "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.count("<svg") >= 6
    assert not [m for m in console_messages(run.stderr) if "Uncaught" in m or "Error" in m]


def test_report_screenshot(pages, tmp_path):
    live, _ = pages
    shot = tmp_path / "report.png"
    run = chromium(tmp_path, live.as_uri(), f"--screenshot={shot}", "--window-size=1200,2400")
    assert run.returncode == 0, run.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a drawn page, not a blank one


def pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", data))


@pytest.fixture(scope="module")
def sample_player_pages(tmp_path_factory):
    """The pages of ed (the careless player: the most findings) and ana from the sample season."""
    import duckdb

    from conftest import ROOT

    db = ROOT / "data" / "sample" / "season.duckdb"
    if not db.exists():
        pytest.skip("data/sample/season.duckdb not built")
    con = duckdb.connect(str(db), read_only=True)
    ctx = report.player_context(con)
    out = tmp_path_factory.mktemp("players") / "players"
    out.mkdir()
    paths = {}
    for name in ("ed", "ana"):
        paths[name] = out / f"{name}.html"
        paths[name].write_text(report.player_page_html(ctx, name), encoding="utf-8")
    con.close()
    return paths


def test_player_page_prints_on_at_most_two_a4_pages(sample_player_pages, tmp_path):
    for name, page in sample_player_pages.items():
        pdf = tmp_path / f"{name}.pdf"
        run = chromium(tmp_path, page.as_uri(), "--no-pdf-header-footer", f"--print-to-pdf={pdf}")
        assert run.returncode == 0, run.stderr[-2000:]
        assert 1 <= pdf_pages(pdf.read_bytes()) <= 2, name


def test_player_page_draws_without_script(sample_player_pages, tmp_path):
    run = chromium(tmp_path, sample_player_pages["ed"].as_uri(), "--dump-dom")
    assert run.returncode == 0
    assert "<script" not in run.stdout.split("<body")[1]  # the chart is SVG: nothing to run
    assert run.stdout.count('class="card') > 50 and "evidence" in run.stdout
