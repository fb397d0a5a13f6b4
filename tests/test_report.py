"""The static HTML report: content, hand replays with the offending card marked, escaping."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import duckdb
import pytest

import metrics_fixture
from spadework.analysis import report
from spadework.parsers.schema import create_tables

EVIL = "<script>alert(1)</script>"


class Page(HTMLParser):
    """Collects the scripts (with their type) and the visible text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[str | None, str]] = []
        self.text: list[str] = []
        self._in: str | None = None
        self._type: str | None = None
        self._buf: list[str] = []
        self.bad_cards: list[str] = []
        self._bad = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "style"):
            self._in, self._type, self._buf = tag, a.get("type"), []
        if tag == "span" and "bad" in (a.get("class") or "").split():
            self._bad = True

    def handle_endtag(self, tag):
        if tag == self._in:
            if tag == "script":
                self.scripts.append((self._type, "".join(self._buf)))
            self._in = None
        if tag == "span":
            self._bad = False

    def handle_data(self, data):
        if self._in:
            self._buf.append(data)
        else:
            self.text.append(data)
            if self._bad:
                self.bad_cards.append(data)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    con = metrics_fixture.build(evil_name=True)
    out = tmp_path_factory.mktemp("report")
    path = report.build_report(con, out)
    static = report.build_report(con, tmp_path_factory.mktemp("static"), interactive=False)
    yield con, path, path.read_text(encoding="utf-8"), static.read_text(encoding="utf-8")
    con.close()


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    return p


def test_report_file_and_sections(built):
    _, path, html, _ = built
    assert path.name == "index.html" and path.exists()
    for anchor in ('id="summary"', 'id="players"', 'id="charts"', 'id="mismatches"', 'id="findings"'):
        assert anchor in html
    assert "Content-Security-Policy" in html and "connect-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched from the network
    text = " ".join(parse(html).text)
    assert "3 findings in 3 hands" in text


def test_log_text_is_escaped(built):
    _, _, html, static = built
    for page in (html, static):
        assert EVIL not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        p = parse(page)
        assert any(EVIL in t for t in p.text)  # shown as text
        for kind, body in p.scripts:  # no script carries the name, except JSON data that is never run
            assert kind == "application/json" or "alert(1)" not in body
    p = parse(html)
    specs = [body for kind, body in p.scripts if kind == "application/json"]
    assert len(specs) == 6 and all("\\u003cscript\\u003e" in s or "alert" not in s for s in specs)
    assert any("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in s for s in specs)


def test_interactive_and_static_charts(built):
    _, _, html, static = built
    p = parse(html)
    runnable = [body for kind, body in p.scripts if kind != "application/json"]
    assert len(runnable) == 3  # error hook, the Vega bundle, the embedding
    assert "window.vegaEmbed" in runnable[1] and len(runnable[1]) > 500_000
    assert html.count('class="chart"') == 6
    assert "<script" not in static and static.count("<svg") >= 6


def test_findings_are_replayed_with_the_offending_card_marked(built):
    _, _, html, _ = built
    p = parse(html)
    # the renege (TH) is marked in the finding, in North's hand and in trick 10; the early bid is marked
    assert p.bad_cards.count("⚠T♥") == 3
    assert "⚠E 4" in p.bad_cards
    assert 'class="badcell"><span class="card red bad" title="TH: RENEGE">⚠T♥</span>' in html
    text = " ".join(p.text)
    assert "game G2 · hand 1 · RENEGE" in text and "game G1 · hand 4 · BID_OUT_OF_TURN" in text
    assert "N played TH on a diamond lead while holding TD" in text
    assert "(deal inferred from the cards played)" in text


def test_score_mismatch_table(built):
    _, _, html, _ = built
    section = html.split('id="mismatches"')[1].split('id="findings"')[0]
    cells = re.findall(r"<td>([^<]*)</td>", section)
    assert cells == ["G1", "2", "T1", "1", "EW", "SCORE_MISMATCH", "total", "175", "171",
                     "EW total: recorded 175, expected 171"]  # fmt: skip


def test_hand_replay_data(built):
    con = built[0]
    r = report.hand_replay(con, "G2", 1)
    assert r.players["S"] == EVIL and r.deal_inferred
    assert sorted(r.deal["N"]) == sorted(["AC", "KC", "QC", "JC", "3H", "6H", "9H", "TH", "5S", "9S", "TS", "7D", "TD"])
    assert r.tricks[9] == (10, "E", {"E": "KD", "S": "8D", "W": "9D", "N": "TH"}, "E")
    assert r.bids == [(1, "N", "4"), (2, "E", "3"), (3, "S", "nil"), (4, "W", "4")]
    assert r.taken == {"N": 4, "E": 4, "S": 0, "W": 5}
    g1 = report.hand_replay(con, "G1", 3)
    assert g1.deal is None and (2, "N", "blind nil") in g1.bids and g1.findings == []
    g3 = report.hand_replay(con, "G3", 1)
    assert (1, "E", "blind 7") in g3.bids
    with pytest.raises(KeyError):
        report.hand_replay(con, "G9", 1)
    standalone = report.hand_replay_html(con, "G2", 1, standalone=True)
    assert standalone.startswith("<style>") and EVIL not in standalone


def test_report_on_an_empty_database(tmp_path):
    con = duckdb.connect()
    create_tables(con)
    html = report.build_report(con, tmp_path / "empty").read_text(encoding="utf-8")
    assert "No findings." in html and "No data to chart." in html and "None: every recorded score" in html
    assert "<script" not in html.split("</head>")[1]  # nothing to embed


def test_card_html():
    assert report.card_html("TD") == '<span class="card red" title="TD">T♦</span>'
    assert report.card_html("BJ", ["RENEGE"]) == '<span class="card joker bad" title="big joker: RENEGE">⚠BJ</span>'
    assert report.card_html("<b>") .count("<b>") == 0
