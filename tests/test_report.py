"""The static HTML report: content, hand replays with the offending card marked, escaping."""

from __future__ import annotations

import os
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


def pages(path) -> dict[str, str]:
    """Every page of a report folder by its path relative to the folder."""
    root = path.parent
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.html"))}


def test_report_file_and_sections(built):
    _, path, html, _ = built
    assert path.name == "index.html" and path.exists()
    for anchor in ('id="summary"', 'id="players"', 'id="charts"', 'id="mismatches"', 'id="findings"'):
        assert anchor in html
    assert "Content-Security-Policy" in html and "connect-src 'none'" in html
    all_pages = pages(path)
    evil_page = "players/" + report.page_names([EVIL])[EVIL] + ".html"
    assert set(all_pages) == {"index.html", "standings.html", "players/ana.html", "players/bo.html",
                              "players/cy.html", evil_page, "games/G1.html", "games/G2.html", "games/G3.html"}  # fmt: skip
    for name, page in all_pages.items():
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), name  # nothing from the network
        assert "Content-Security-Policy" in page, name
    text = " ".join(parse(html).text)
    assert "3 findings in 3 hands" in text


def test_every_link_reaches_a_page_and_an_anchor(built):
    _, path, _, _ = built
    assert links_reached(path) > 100


def test_a_link_to_a_hand_without_a_replay_reaches_its_row(tmp_path):
    """The player pages' bid tables link each hand to games/X.html#hand-N, which only hands with a
    replay had: a clean hand's link opened the top of the game page (found by a report audit)."""
    from conftest import ROOT
    from spadework.analysis.engine.engines import REFERENCE
    from spadework.parsers.db import connect

    con = connect(tmp_path / "x.duckdb")
    REFERENCE.validate(con, [ROOT / "data" / "club_night.jsonl"])
    path = report.build_report(con, tmp_path / "report")
    game_pages = [p for name, p in pages(path).items() if name.startswith("games/")]
    assert any('id="hand-1"' in p for p in game_pages)
    links_reached(path)


def links_reached(path) -> int:
    """Check every link of the report at ``path`` reaches a page and, where it names one, an anchor
    of it; return how many links there are."""
    all_pages = pages(path)
    ids = {name: set(re.findall(r'id="([^"]+)"', page)) for name, page in all_pages.items()}
    checked = 0
    for name, page in all_pages.items():
        base = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
        for href in re.findall(r'href="([^"]+)"', page):
            target, _, anchor = href.partition("#")
            resolved = name if not target else os.path.normpath(base + target).replace(os.sep, "/")
            assert resolved in all_pages, (name, href)
            if anchor:
                assert anchor in ids[resolved], (name, href)
            checked += 1
    return checked


def test_finding_rows_link_to_their_replay(built):
    _, path, html, _ = built
    section = html.split('id="findings"')[1]
    rows = re.findall(r"<tr><td><a href=\"games/(G\d).html\">.*?</tr>", section)
    assert rows == ["G1", "G1", "G2"]
    # each row's last cell is a link to the replay of its hand (here on the same page)
    assert section.count(">replay</a></td></tr>") == 3
    g2 = pages(path)["games/G2.html"]
    assert 'id="hand-1"' in g2 and 'href="#hand-1"' in g2  # the hands table links to the replay


def test_log_text_is_escaped(built):
    _, path, html, static = built
    for name, page in [*pages(path).items(), ("static", static)]:
        assert EVIL not in page, name
        p = parse(page)
        for kind, body in p.scripts:  # no script carries the name, except JSON data that is never run
            assert kind == "application/json" or "alert(1)" not in body, name
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert any(EVIL in t for t in parse(html).text)  # shown as text
    p = parse(html)
    specs = [body for kind, body in p.scripts if kind == "application/json"]
    assert len(specs) == 6 and all("\\u003cscript\\u003e" in s or "alert" not in s for s in specs)
    assert any("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in s for s in specs)


def test_yes_no_instead_of_true_false(built):
    _, path, _, _ = built
    for name, page in pages(path).items():
        text = " ".join(parse(page).text)
        assert not re.search(r"\b(True|False)\b", text), name
    assert ">yes<" in pages(path)["games/G1.html"] and ">no<" in pages(path)["games/G1.html"]


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
    assert "Reading a replay." in text and "underlined" in text and "ringed" in text  # the legend


def test_the_evidence_is_ringed(built):
    con, _, html, _ = built
    r = report.hand_replay(con, "G2", 1)
    # N reneged in trick 10 on a diamond lead holding TD (played in trick 11)
    assert r.evidence == {"N": {"TD": ["held when N reneged in trick 10 (played in trick 11)"]}}
    ringed = 'class="card red evidence" title="TD: held when N reneged in trick 10 (played in trick 11)">T♦</span>'
    assert html.count(ringed) == 2  # in North's hand and in trick 11
    # a spade led before spades were broken: the leader's non-spades are the evidence
    r.findings = [{"code": "SPADE_LED_BEFORE_BROKEN", "trick": 8, "seat": "W", "card": "4S"}]
    assert sorted(report.evidence(r)["W"]) == ["6D", "7H", "9D"]


def test_score_mismatch_table(built):
    _, _, html, _ = built
    section = html.split('id="mismatches"')[1].split('id="findings"')[0]
    assert '<td><a href="games/G1.html">G1</a></td><td><a href="games/G1.html#hand-2">2</a></td>' in section
    cells = re.findall(r"<td>([^<]*)</td>", section)
    assert cells == ["T1", "1", "EW", "SCORE_MISMATCH", "total", "175", "171", "EW total: recorded 175, expected 171"]


def test_player_page(built):
    _, path, _, _ = built
    page = pages(path)["players/bo.html"]
    for sid in ("results", "leaks", "tendencies", "calibration", "findings"):
        assert f'<section id="{sid}">' in page
    text = " ".join(parse(page).text)
    assert "Tendencies against the field" in text and "Bid bias" in text and "95% interval" in text
    assert "bo in red" in text and report.charts.HIGHLIGHT in page  # the calibration highlights bo
    assert "BID_OUT_OF_TURN" in text and 'class="replays"' in page  # bo's early bid, replayed
    assert "<svg" in page and "@media print" in page
    # a section can be added (issue 14 adds card costs)
    extra = lambda ctx, player: ("costs", "Card costs", f"<p>costs of {report.esc(player)}</p>")  # noqa: E731
    report.PLAYER_SECTIONS.append(extra)
    try:
        con = metrics_fixture.build()
        report.build_report(con, path.parent / "extended", interactive=False)
        page = (path.parent / "extended" / "players" / "bo.html").read_text(encoding="utf-8")
        assert '<section id="costs"><h2>Card costs</h2><p>costs of bo</p></section>' in page
    finally:
        report.PLAYER_SECTIONS.remove(extra)


def test_standings_and_game_pages(built):
    _, path, _, _ = built
    all_pages = pages(path)
    st = all_pages["standings.html"]
    text = " ".join(parse(st).text)
    assert "Club" in text and "League" in text and "All games" in text
    assert '<a href="players/ana.html">ana</a>' in st and '<a href="games/G1.html">G1</a>' in st
    g1 = " ".join(parse(all_pages["games/G1.html"]).text)
    assert "Game G1" in g1 and "NS won" in g1 and "SCORE_MISMATCH" in g1
    assert "-109 / -109" in g1 and "171 / 175" in g1  # EW's total after hand 2: recomputed / recorded


def test_page_names():
    names = report.page_names(["ana", "Bo", "bo", "../x", "<b>", "con", "a" * 80, "p 1"])
    assert names["ana"] == "ana"
    assert names["Bo"] != names["bo"] and names["bo"].startswith("bo-")  # differ only in case
    for n in ("../x", "<b>", "con", "a" * 80, "p 1"):
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,40}-[0-9a-f]{8}", names[n]), n
    assert len(set(names.values())) == len(names)


def test_page_names_never_collide_with_a_name_that_looks_like_a_made_one():
    """A player really named "ana-72019bba" (the stem made for "ana" beside "Ana") got the same
    file: one page was lost and both links led to the other (found by a report audit)."""
    made = report.page_names(["ana", "Ana"])["ana"]
    names = report.page_names(["ana", "Ana", made])
    assert len({v.lower() for v in names.values()}) == 3
    assert names[made] == made  # a plain name keeps its own; the made one moves on
    assert re.fullmatch(r"ana-[0-9a-f]{16}", names["ana"])


def test_interval_svg():
    row = {"player_value": 0.3, "player_low": 0.2, "player_high": 0.4, "field_value": 0.5, "field_low": 0.45,
           "field_high": 0.55, "verdict": "leak"}  # fmt: skip
    svg = report.interval_svg("rate", row)
    assert svg.startswith('<svg class="iv"') and 'fill="#c62828"' in svg and "<rect" in svg
    assert report.interval_svg("rate", {}) == ""


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


def test_a_report_written_over_an_earlier_one_keeps_none_of_its_pages(tmp_path):
    """A report written into the folder of another kept that report's player and game pages beside
    its own, findings and all (found by a new-user pass)."""
    out = tmp_path / "site"
    report.build_report(metrics_fixture.build(), out)
    (out / "players" / "someone-gone.html").write_text("old", encoding="utf-8")
    (out / "games" / "old-game.html").write_text("old", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    con = duckdb.connect()
    create_tables(con)
    report.build_report(con, out)
    assert list((out / "players").glob("*.html")) == [] and list((out / "games").glob("*.html")) == []
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"  # only the report's own pages go


def test_escaped_text_leaves_no_directional_override_open():
    """A name's unclosed right-to-left override (U+202E) turned round the rest of its table row."""
    assert report.esc("<b>\u202e") == "&lt;b&gt;\u202e\u202c"
    assert report.esc("ana") == "ana" and report.esc(None) == ""


def test_the_records_that_could_not_be_read_are_named(tmp_path):
    """The summary counted "3 load errors" but no page said which file or line (found by a user audit):
    a director reading the report could not find the broken file."""
    con = metrics_fixture.build()
    assert 'id="load-errors"' not in report.build_report(con, tmp_path / "clean", interactive=False).read_text()
    con.execute("INSERT INTO load_errors (source_file, source_line, message, raw) VALUES "
                "('night<3>.jsonl', 7, 'line 7: dealer ''X'' is not a seat', '{}'), "
                "('night<3>.jsonl', 9, 'line 9: dealer ''Y'' is not a seat', '{}')")  # fmt: skip
    path = report.build_report(con, tmp_path / "report", interactive=False)
    html = path.read_text(encoding="utf-8")
    section = html[html.index('<h2 id="load-errors">'):]
    assert "2 records of the logs could not be read" in section
    assert "<td>night&lt;3&gt;.jsonl</td><td class=num>7</td>" in section and ">9</td>" in section
    assert '<a href="#load-errors">' in html
    assert links_reached(path) > 10
