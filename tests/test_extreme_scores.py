"""Scores at the edge of what the tables hold: a log may start mid-game with totals near 2**31; every reader
(report, stats, standings, metrics) must still answer, since a margin between two such totals leaves 32 bits."""

from __future__ import annotations

from dataclasses import replace

from typer.testing import CliRunner

from spadework.analysis import metrics
from spadework.analysis.cli import app
from spadework.analysis.engine.checker import check_db
from spadework.analysis.sim import simulate_season
from spadework.parsers import db, jsonl


def test_readers_answer_when_totals_are_near_the_32_bit_limit(tmp_path):
    records, _ = simulate_season(4, 1, 3)
    records = list(records)[:3]
    records[0] = replace(records[0], score_before=(2_147_483_000, -2_147_483_000), bags_before=(0, 0))
    log = tmp_path / "edge.jsonl"
    log.write_text(jsonl.dumps(records))
    dbf = tmp_path / "edge.duckdb"
    con = db.connect(dbf)
    db.load_files(con, [log])
    check_db(con)
    margins = metrics.run(con, "hands", by="situation")  # reads sw_player_hands' margin
    assert set(margins["situation"]) == {"ahead", "behind"}
    con.close()
    runner = CliRunner()
    for args in (["report", "--db", str(dbf), "--out", str(tmp_path / "rep")], ["stats", "--db", str(dbf)],
                 ["standings", "--db", str(dbf), "--json"]):
        res = runner.invoke(app, args)
        assert res.exit_code in (0, 1), (args, res.output, res.exception)
    assert (tmp_path / "rep" / "index.html").is_file()
