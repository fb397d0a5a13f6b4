"""Results and standings (issue 12 item 2) and the ``seats`` view (item 1)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import metrics_fixture
from spadework.analysis import cli, standings
from spadework.analysis.engine.checker import check_db
from spadework.parsers import db

ROOT = Path(__file__).resolve().parent.parent
CLUB = [ROOT / "data" / f for f in ("club_night.jsonl", "club_night.spn", "scoresheet.csv")]


@pytest.fixture(scope="module")
def club():
    con = db.connect()
    db.load_files(con, CLUB)
    check_db(con)
    yield con
    con.close()


def test_game_results(club):
    st = standings.standings(club)
    games = {g["game_id"]: g for g in st.games.iter_rows(named=True)}
    assert len(games) == 6 and st.events == ["Thursday club night", None]
    t4 = games["cn-0314-t4"]
    # data/README.md: the scorer's slip is carried on; recomputed EW 173, recorded 183, unfinished
    assert (t4["total_ns"], t4["total_ew"], t4["winner"], t4["hands"], t4["findings"]) == (272, 173, None, 3, 2)
    assert (t4["recorded_total_ew"], t4["result_differs"]) == (183, True)
    assert (t4["player_n"], t4["player_e"], t4["ns"], t4["ew"]) == ("mo", "ned", "mo & oli", "ned & pat")
    t1 = games["sheet-0321-t1"]
    assert (t1["total_ns"], t1["total_ew"], t1["winner"], t1["result_differs"]) == (572, 240, "NS", False)
    assert [g for g, r in games.items() if r["result_differs"]] == ["cn-0314-t4"]
    assert standings.result_text(t4) == "unfinished ⚠ log: 272 / 183"


def test_player_and_partnership_standings(club):
    st = standings.standings(club)
    sheet = st.players.filter(pl.col("event").is_null())
    rows = {r["player"]: r for r in sheet.iter_rows(named=True)}
    rosa = rows["rosa"]
    assert (rosa["rank"], rosa["games"], rosa["wins"], rosa["win_rate"], rosa["points_for"], rosa["points_against"]) == (
        1, 1, 1, 1.0, 572, 240)  # fmt: skip
    # sam & uli lost the finished game: a loss; vic & xia's game is unfinished: no result
    assert (rows["sam"]["losses"], rows["sam"]["win_rate"], rows["vic"]["win_rate"]) == (1, 0.0, None)
    # EW's bags in sheet-0321-t1 (10 reached in hand 8) and NS's set in hand 7 (S's failed nil is no set)
    assert rows["uli"]["bags"] >= 10 and rows["tia"]["sets"] == 1
    assert rows["tia"]["rank"] == 1 and rows["tia"]["decided_by"] == "tied"
    pairs = st.partnerships.filter(pl.col("event").is_null())
    assert pairs["players"].to_list() == [["rosa", "tia"], ["vic", "xia"], ["wen", "yul"], ["sam", "uli"]]
    assert pairs["rank"].to_list() == [1, 2, 3, 4]
    # one ranking over every game
    overall = standings.standings(club, by_event=False)
    assert overall.players["event"].null_count() == overall.players.height == 24


def test_tiebreak_chain():
    rows = [
        {"name": "a", "wins": 2, "point_diff": 10},
        {"name": "b", "wins": 2, "point_diff": 50},
        {"name": "c", "wins": 2, "point_diff": 50},
        {"name": "d", "wins": 3, "point_diff": -5},
        {"name": "e", "wins": 0, "point_diff": 0},
    ]
    h2h = {"a": 2, "b": 1, "c": 1}  # a beat the others tied on wins more often

    def head_to_head(group):
        return {r["name"]: h2h.get(r["name"], 0) for r in group}

    ranked = standings._rank([dict(r) for r in rows], ("wins", "head_to_head", "point_diff"),
                             lambda r: r["name"], head_to_head)  # fmt: skip
    assert [(r["name"], r["rank"], r["decided_by"]) for r in ranked] == [
        ("d", 1, None), ("a", 2, "wins"), ("b", 3, "head_to_head"), ("c", 3, "tied"), ("e", 5, "wins")]  # fmt: skip
    by_diff = standings._rank([dict(r) for r in rows], ("point_diff",), lambda r: r["name"], head_to_head)
    assert [r["name"] for r in by_diff] == ["b", "c", "a", "e", "d"]
    assert standings.parse_tiebreak("wins, sets") == ("wins", "sets")
    with pytest.raises(ValueError, match="unknown tie-break luck; known: wins"):
        standings.parse_tiebreak("wins,luck")
    for empty in ("", " ", []):  # (it said "unknown tie-break none")
        with pytest.raises(ValueError, match="^the tie-break chain is empty: give one or more of wins, "):
            standings.parse_tiebreak(empty)


def entry(game, player, partner, side, opponents, pf, pa, won, finished=True):
    return {"game_id": game, "event": "E", "player": player, "partner": partner, "side": side,
            "opponents": opponents, "points_for": pf, "points_against": pa, "finished": finished, "won": won,
            "sets": 0, "bags": 0}  # fmt: skip


def test_head_to_head_is_applied_again_among_those_still_tied():
    """a & b beat c & d narrowly, c & d beat e & f by a lot, e & f beat g & h: a, b, c, d, e, f all
    have one win; head-to-head puts e and f (no win over the tied) last, then again among a, b, c, d
    puts a and b (who beat c and d) first, although c and d have the better point difference."""
    games = [("G1", ("a", "b"), ("c", "d"), 510, 490), ("G2", ("c", "d"), ("e", "f"), 600, 100),
             ("G3", ("e", "f"), ("g", "h"), 400, 300)]  # fmt: skip
    rows = []
    for gid, (w1, w2), (l1, l2), pw, pl_ in games:
        rows += [entry(gid, w1, w2, "NS", sorted([l1, l2]), pw, pl_, True),
                 entry(gid, w2, w1, "NS", sorted([l1, l2]), pw, pl_, True),
                 entry(gid, l1, l2, "EW", sorted([w1, w2]), pl_, pw, False),
                 entry(gid, l2, l1, "EW", sorted([w1, w2]), pl_, pw, False)]  # fmt: skip
    df = standings._standings(pl.DataFrame(rows), "player", standings.DEFAULT_TIEBREAK, ["E"])
    ranked = [(r["player"], r["rank"], r["decided_by"]) for r in df.iter_rows(named=True)]
    assert ranked == [("a", 1, None), ("b", 1, "tied"), ("c", 3, "head_to_head"), ("d", 3, "tied"),
                      ("e", 5, "head_to_head"), ("f", 5, "tied"), ("g", 7, "wins"), ("h", 7, "tied")]  # fmt: skip
    assert df.filter(pl.col("player") == "c")["point_diff"][0] > df.filter(pl.col("player") == "a")["point_diff"][0]
    by_diff = standings._standings(pl.DataFrame(rows), "player", ("point_diff",), ["E"])
    assert by_diff["player"].to_list()[:2] == ["c", "d"]


def test_json_shape(club):
    data = standings.standings(club).to_json()
    assert set(data) == {"tiebreak", "games", "players", "partnerships"}
    g = next(g for g in data["games"] if g["game_id"] == "sheet-0321-t1")
    assert {"game_id", "event", "players", "total_ns", "total_ew", "winner", "hands", "findings"} <= set(g)
    assert g["players"] == {"N": "rosa", "E": "sam", "S": "tia", "W": "uli"} and g["winner"] == "NS"
    p = data["players"][0]
    assert {"player", "games", "wins", "win_rate", "points_for", "points_against", "avg_margin", "sets", "bags"} <= set(p)
    assert isinstance(data["partnerships"][0]["players"], list) and len(data["partnerships"][0]["players"]) == 2
    json.dumps(data)  # JSON-ready


@pytest.fixture(scope="module")
def club_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("standings") / "club.duckdb"
    con = db.connect(path)
    db.load_files(con, CLUB)
    con.execute("UPDATE hand_records SET player_n = '=HYPERLINK(\"x\")' WHERE player_n = 'rosa'")  # the stored row behind hands
    check_db(con)
    con.close()
    return path


def test_cli(club_db):
    runner = CliRunner()
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db)], terminal_width=100)
    assert r.exit_code == 0, r.output
    assert "Thursday club night: 4 games, 0 finished" in r.stdout and "unfinished ⚠ log: 272 / 183" in r.stdout
    assert '=HYPERLINK("x")' in r.stdout  # a log's text is shown as text
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--csv", "--table", "partnerships"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    sheet = [r for r in rows if r["event"] == ""]
    assert sheet[0]["players"] == "'=HYPERLINK(\"x\") & tia" and sheet[0]["rank"] == "1"
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--csv", "--table", "games"])
    assert "'=HYPERLINK" in r.stdout and r.stdout.splitlines()[0].startswith("game_id,event,date")
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--json", "--event", "Thursday club night"])
    assert r.exit_code == 0 and len(json.loads(r.stdout)["games"]) == 4
    # --overall over one event is that event's ranking, under its name (it used to say "All games")
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--overall", "--event", "Thursday club night"], terminal_width=100)
    assert r.exit_code == 0 and "Thursday club night: 4 games, 0 finished" in r.stdout and "All games" not in r.stdout
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--event", "Friday club night"])
    assert r.exit_code == 2 and "no loaded hand names the event 'Friday club night'" in r.output, r.output
    assert "'Thursday club night'" in r.output  # the events there are
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--tiebreak", "luck"])
    assert r.exit_code == 2 and "unknown tie-break luck; known: wins," in r.output
    for chain, why in (("wins,,point_diff", "an empty item"), ("wins,point_diff,wins", "wins named twice")):
        r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--tiebreak", chain])
        assert r.exit_code == 2 and why in r.output, (chain, r.output)
    r = runner.invoke(cli.app, ["standings", "--db", str(club_db), "--table", "games"])
    assert r.exit_code == 2 and "--table goes with --csv" in r.output
    r = runner.invoke(cli.app, ["standings"])
    assert r.exit_code == 2


def test_cli_from_logs():
    r = CliRunner().invoke(cli.app, ["standings", "-q", str(CLUB[2]), "--json"])
    assert r.exit_code == 0, r.output
    games = json.loads(r.stdout)["games"]
    assert [(g["game_id"], g["winner"]) for g in games] == [("sheet-0321-t1", "NS"), ("sheet-0321-t2", None)]


def test_seats_view():
    con = metrics_fixture.build()
    rows = con.execute("SELECT * FROM seats WHERE game_id = 'G2' ORDER BY seat").fetchall()
    assert [c[0] for c in con.execute("SELECT * FROM seats LIMIT 0").description] == [
        "game_id", "hand", "seat", "side", "player", "partner", "bid", "nil", "blind", "taken"]  # fmt: skip
    assert rows == [
        ("G2", 1, "E", "EW", "cy", "bo", 3, False, False, 4),
        ("G2", 1, "N", "NS", "ana", "di", 4, False, False, 4),
        ("G2", 1, "S", "NS", "di", "ana", 0, True, False, 0),
        ("G2", 1, "W", "EW", "bo", "cy", 4, False, False, 5),
    ]
    # G3: W bid nothing (no bid row); the tricks are the log's (no card play)
    w = con.execute("SELECT bid, nil, taken FROM seats WHERE game_id = 'G3' AND seat = 'W'").fetchone()
    assert w == (None, None, 4)
    # one row per seat of every hand, the players as the hands table has them
    assert con.execute("SELECT count(*) FROM seats").fetchone()[0] == 4 * con.execute("SELECT count(*) FROM hands").fetchone()[0]
    assert con.execute(
        "SELECT count(*) FROM seats s JOIN hands h USING (game_id, hand) WHERE s.player IS DISTINCT FROM "
        "CASE s.seat WHEN 'N' THEN h.player_n WHEN 'E' THEN h.player_e WHEN 'S' THEN h.player_s ELSE h.player_w END"
    ).fetchone()[0] == 0


# --- players named everywhere (issue 12 item 1) -----------------------------------------------------


def test_findings_name_the_player(club):
    rows = club.execute("SELECT code, seat, player, message FROM violations ORDER BY code").fetchall()
    assert rows == [
        ("RENEGE", "E", "ned",
         "hand 2, trick 2: E (ned) reneged, playing 3S on a club lead while holding 8C (played in trick 11)"),
        ("SCORE_MISMATCH", None, None, "hand 2: EW total recorded 133, rules give 123"),
    ]  # fmt: skip


def test_validate_json_and_text_name_the_player():
    r = CliRunner().invoke(cli.app, ["validate", str(CLUB[1]), "--json"])
    data = json.loads(r.stdout)
    [renege] = [f for g in data["games"] for f in g["findings"] if f["code"] == "RENEGE"]
    assert (renege["seat"], renege["player"]) == ("E", "ned") and "E (ned) reneged" in renege["message"]
    r = CliRunner().invoke(cli.app, ["validate", str(CLUB[1])])
    assert "hand 2, trick 2: E (ned) reneged, playing 3S" in r.stdout


def test_name_seat():
    from spadework.analysis.engine.findings import Finding, name_seat, seat_ref
    from spadework.parsers.seats import Seat

    assert seat_ref(Seat.E, "ed") == "E (ed)" and seat_ref(Seat.E) == "E"
    # the seat as a word, not the S of 3S or the S of NS
    assert name_seat("hand 1, trick 3: S led 3S before spades were broken", Seat.S, "sam") == (
        "hand 1, trick 3: S (sam) led 3S before spades were broken")
    assert name_seat("hand 2: NS total recorded 5; S bid", Seat.S, "x(1)\\") == "hand 2: NS total recorded 5; S (x(1)\\) bid"
    assert name_seat("hand 2: dealt by W, but N should", Seat.W, None) == "hand 2: dealt by W, but N should"
    f = Finding(code="BID_MISSING", game_id="g", hand=1, seat=Seat.W, message="hand 1: W has no bid")
    named = f.named(("a", "b", "c", "d"))
    assert (named.player, named.message, named.to_row()["player"]) == ("d", "hand 1: W (d) has no bid", "d")
    assert named.named(("a", "b", "c", "z")) is named  # named once
    assert f.named((None, None, None, None)) is f


def test_a_raised_finding_names_its_player_too():
    from spadework.analysis.engine.checker import check_game
    from spadework.analysis.engine.findings import CheckError
    from spadework.parsers.spn import load

    records = [r for r in load(CLUB[1]) if getattr(r, "game_id", None) == "cn-0314-t4"]
    with pytest.raises(CheckError) as exc:
        check_game(records, policy="raise")
    assert exc.value.finding.player == "ned" and "E (ned) reneged" in exc.value.finding.message


def _played_on_after_the_end() -> list[str]:
    """Six hands of NS 5+5 (making 10) and EW 1+1 (taking 3): NS reach 500 at hand 5 (500 to 105,
    EW 5 bags), the log records that and the winner there, then records a sixth hand (600 to 126)."""
    lines = []
    for h in range(1, 7):
        dealer = "NESW"[(h - 1) % 4]
        order = "NESW"[(h) % 4:] + "NESW"[:(h) % 4]
        bid = {"N": 5, "S": 5, "E": 1, "W": 1}
        rec = {"game_id": "g7", "hand": h, "event": "ev", "players": {"N": "ana", "E": "bo", "S": "cy", "W": "di"},
               "dealer": dealer, "bids": [{"seat": s, "bid": bid[s]} for s in order],
               "taken": {"N": 5, "S": 5, "E": 2, "W": 1},
               "score": {"NS": {"points": 100, "total": 100 * h, "bags": 0}, "EW": {"points": 21, "total": 21 * h, "bags": h}}}
        if h == 5:
            rec["winner"] = "NS"
        lines.append(json.dumps(rec))
    return lines


def test_hands_after_the_end_change_neither_the_result_nor_the_sets_and_bags(tmp_path):
    """RULES.md section 6: a hand after the end is PLAYED_AFTER_GAME_END, and "the game's totals and
    winner stay as they were when it ended".  Standings compared the recomputed end with the log's
    last hand (a false "log: 600 / 126" warning) and counted the sixth hand's bag."""
    path = tmp_path / "g7.jsonl"
    path.write_text("\n".join(_played_on_after_the_end()) + "\n")
    con = db.connect()
    db.load_files(con, [path])
    check_db(con)
    assert con.execute("SELECT code, hand FROM violations").fetchall() == [("PLAYED_AFTER_GAME_END", 6)]
    st = standings.standings(con)
    (g,) = st.games.iter_rows(named=True)
    assert (g["total_ns"], g["total_ew"], g["winner"]) == (500, 105, "NS")
    assert (g["recorded_total_ns"], g["recorded_total_ew"], g["recorded_winner"], g["result_differs"]) == (500, 105, "NS", False)
    assert standings.result_text(g) == "NS won"
    bo = next(r for r in st.players.iter_rows(named=True) if r["player"] == "bo")
    assert (bo["points_for"], bo["bags"], bo["sets"]) == (105, 5, 0)


def test_sets_and_bags_are_the_official_score_under_a_renege_penalty(tmp_path):
    """Under ``renege_penalty_tricks`` the official score (after the tricks move) decides the totals;
    standings took sets and bags from the score as played, so one row could show official points
    beside as-played sets."""
    recs = [r for r in db.iter_records(_club_con()) if r.game_id == "cn-0314-t4"]
    objs = []
    from spadework.parsers.jsonl import record_to_obj

    for r in recs:
        o = record_to_obj(r)
        o["rules"] = {"preset": "standard", "renege_penalty_tricks": 3}
        o.pop("score", None)
        objs.append(json.dumps(o))
    path = tmp_path / "t4.jsonl"
    path.write_text("\n".join(objs) + "\n")
    con = db.connect()
    db.load_files(con, [path])
    check_db(con)
    official = dict(con.execute(
        "SELECT side, count(*) FILTER (WHERE contract > 0 AND NOT made) FROM hand_scores GROUP BY side").fetchall())
    played = dict(con.execute(
        "SELECT side, count(*) FILTER (WHERE contract > 0 AND NOT made) FROM hand_scores_as_played GROUP BY side").fetchall())
    assert official != played  # the penalty set a side that made its contract in play
    st = standings.standings(con)
    for r in st.players.iter_rows(named=True):
        side = "NS" if r["player"] in ("mo", "oli") else "EW"
        assert r["sets"] == official[side], r


def _club_con():
    con = db.connect()
    db.load_files(con, CLUB[:2])
    return con


def test_standings_saved_to_a_file_keep_their_columns(tmp_path):
    """Standings written to a file or a pipe were laid out at 80 columns, wrapping names and
    headers a few letters a line ("Partnersh / ip"); off a terminal the tables keep their width."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run([sys.executable, "-m", "spadework.analysis.cli", "standings", *map(str, CLUB)],
                         capture_output=True, text=True, env=env, check=True).stdout
    assert " Partnership " in out and "Partnersh\n" not in out
    game_rows = [line for line in out.splitlines() if line.startswith("cn-0314-t4")]
    assert len(game_rows) == 1 and "mo & oli" in game_rows[0] and "ned & pat" in game_rows[0]


def test_standings_of_a_database_not_checked_since_its_last_load_stop():
    """``standings(con)`` answered with empty frames on a database never checked, and with the old
    results after more logs were loaded (found by an API audit), while ``spadework standings`` and
    the metrics refuse; the library now refuses too."""
    from spadework.analysis.engine.checker import check_db
    from spadework.analysis.standings import standings
    from spadework.parsers import db
    from spadework.parsers.state import NotChecked

    con = db.connect()
    db.load_files(con, [ROOT / "data" / "sample" / "season.jsonl"])
    with pytest.raises(NotChecked):
        standings(con)
    check_db(con)
    assert standings(con).games.height == 60


def test_standings_of_logs_say_what_they_leave_out(tmp_path):
    """Standings made from logs name each record they could not read (file, line, reason) and count
    the games whose rules could not be read: the table alone does not show either (an audit found
    one line "1 record could not be read" and nothing at all)."""
    from spadework.analysis import sim

    log = tmp_path / "s.jsonl"
    records, _ = sim.simulate_season(4, 2, 3)
    sim.write_season(records, log)
    lines = log.read_text().splitlines()
    first_game = json.loads(lines[0])["game_id"]
    bad_rules = [json.dumps(dict(json.loads(x), rules={"preset": "standard", "bogus": 1})) if json.loads(x)["game_id"] == first_game else x
                 for x in lines]  # fmt: skip
    (tmp_path / "rules.jsonl").write_text("\n".join(bad_rules) + "\n")
    (tmp_path / "cut.jsonl").write_text("\n".join([lines[0], lines[1][:50], *lines[2:]]) + "\n")
    runner = CliRunner()
    r = runner.invoke(cli.app, ["standings", str(tmp_path / "rules.jsonl")])
    assert r.exit_code == 0 and "1 game with rules that could not be read" in r.stderr, r.stderr
    r = runner.invoke(cli.app, ["standings", str(tmp_path / "cut.jsonl")])
    assert r.exit_code == 2, r.output
    assert "1 record could not be read, and the standings leave them out:" in r.stderr
    assert "cut.jsonl:2: not valid JSON" in r.stderr
    r = runner.invoke(cli.app, ["standings", str(log)])
    assert r.exit_code == 0 and r.stderr == "", r.stderr
