"""Validation over Dask (spadework.analysis.engine.distributed) gives what the compiled engine gives.

On a 2-worker LocalCluster (threads in this process, so it starts in about a second): the same rows in
every loaded and derived table (each view compared row for row, ``load_errors`` and
``load_warnings`` too), the same load and check summaries and findings, a fresh database, on a
simulated season with planted faults whose games are spread over two files and many byte ranges,
on a folder mixing JSON Lines (odd lines, duplicates, gzip), SPN, score sheets and empty files,
and on a database that already holds hands.  Through the command line: the same output and exit
status, and exit 2 with a sentence when the scheduler is unreachable, a worker fails or Dask is
missing.
"""

from __future__ import annotations

import gzip
import socket
import sys

import orjson
import pytest
from typer.testing import CliRunner

distributed = pytest.importorskip("distributed")

from spadework.analysis.cli import app  # noqa: E402
from spadework.analysis.engine import distributed as D  # noqa: E402
from spadework.analysis.engine import loader as fast_load  # noqa: E402
from spadework.analysis.engine import storage  # noqa: E402
from spadework.analysis.engine.engines import COMPILED, check_compiled  # noqa: E402
from spadework.analysis.engine.loader import load_fast  # noqa: E402
from spadework.analysis.sim.season import iter_season, write_season  # noqa: E402
from spadework.parsers.db import connect  # noqa: E402
from spadework.parsers.jsonl import dumps_record  # noqa: E402
from spadework.parsers.state import derived_state  # noqa: E402
from test_loader_fast import _season_objs, edge_lines  # noqa: E402

TABLES = (
    "hands", "deals", "bids", "plays", "recorded_tricks", "recorded_scores", "load_errors", "load_warnings",
    "tricks", "violations", "hand_scores", "games",
)  # fmt: skip


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=50
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _rows(con, table: str) -> list[tuple]:
    return sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def _files(s) -> tuple:
    return ([(f.source_file, f.format, f.hands, f.errors, f.warnings) for f in s.files], list(s.skipped))


def _check(s) -> tuple:
    return (s.games, s.hands, dict(s.by_code), s.games_with_findings, [f.to_row() for f in s.findings])


def assert_same_tables(a, b) -> None:
    for t in TABLES:
        assert _rows(a, t) == _rows(b, t), t
    assert derived_state(a) == derived_state(b) == "fresh"


def assert_same_validate(paths, client, a=None, b=None, rules=None, **kw):
    """Validate ``paths`` with the compiled engine into ``a`` and over Dask into ``b`` (fresh
    databases unless given); every table, the summaries and the findings must be the same."""
    a = a if a is not None else connect(None)
    b = b if b is not None else connect(None)
    la, ca = COMPILED.validate(a, paths, rules=rules)
    lb, cb = D.validate_dask(b, paths, rules=rules, address=client, **kw)
    assert_same_tables(a, b)
    assert _files(la) == _files(lb)
    assert _check(ca) == _check(cb)
    return a, b, la, ca


def _season(tmp_path, games=30, seed=5, rules="standard", fault_rate=0.12):
    recs, faults = [], []
    for g in iter_season(12, games, seed, rules=rules, fault_rate=fault_rate, prefix=f"{rules[:2]}{seed}"):
        recs.extend(g.records)
        faults.extend(g.faults)
    assert faults
    return recs


def test_partition_is_fnv1a_of_the_game_id():
    def fnv(s: str) -> int:
        h = 14695981039346656037
        for byte in s.encode():
            h = ((h ^ byte) * 1099511628211) % 2**64
        return h

    ids = ["abc", "", "g-0001", "José ♠", "x" * 300]
    import pyarrow as pa

    arr = pa.array(["pad"] + ids).slice(1)  # an offset into the buffers
    assert D.partition_of(arr, 7).tolist() == [fnv(s) % 7 for s in ids]
    assert fnv("abc") == 0xE71FA2190541574B


def test_season_spread_over_files_and_byte_ranges(tmp_path, client):
    recs = _season(tmp_path) + _season(tmp_path, games=12, seed=9, rules="barmore")
    # each game's hands alternate between two files, so no file holds a whole game
    odd, even = tmp_path / "odd.jsonl", tmp_path / "even.jsonl"
    odd.write_text("".join(dumps_record(r) + "\n" for r in recs if r.hand % 2))
    even.write_text("".join(dumps_record(r) + "\n" for r in recs if not r.hand % 2))
    a, b, la, ca = assert_same_validate([tmp_path], client, chunk_bytes=64 * 1024, partitions=5)
    assert D.STATS["read_tasks"] >= 8 and D.STATS["partitions"] == 5
    assert ca.findings and la.hands == len(recs) and la.errors == 0
    assert a.execute("SELECT count(DISTINCT rules) FROM games").fetchone()[0] == 2


def _mixed_folder(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "edges.jsonl").write_bytes(b"\n".join(edge_lines(_season_objs())) + b"\n")
    objs = _season_objs(2, seed=3)
    changed = [dict(o, event="replayed") for o in objs[3:9]]
    changed += [changed[0], dict(objs[10], x_extra=1), objs[10], dict(objs[0], hand=999)]  # clashes, then duplicates
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(orjson.dumps(o) for o in objs) + b"\n")
    (tmp_path / "b.jsonl").write_bytes(b"\n".join(orjson.dumps(o) for o in changed) + b"\n")
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(b"\n".join(orjson.dumps(dict(o, game_id="gz" + o["game_id"])) for o in objs) + b"\n"))
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.jsonl").write_bytes(b"\n  \n\r\n")
    recs = [r for g in iter_season(8, 3, 11, fault_rate=0.2) for r in g.records]
    write_season(recs, tmp_path / "s.spn")
    write_season([r for r in recs if r.hand != 2], tmp_path / "s.csv")  # the same games again: already loaded
    write_season(recs[:5], tmp_path / "s.json")
    (tmp_path / "notes.txt").write_text("not a log")
    return tmp_path


@pytest.mark.parametrize("fast_min", [0, None])
def test_folder_mixing_formats_and_bad_lines(tmp_path, client, monkeypatch, fast_min):
    if fast_min is not None:  # every JSON Lines file through the compiled scanner, in tiny ranges
        monkeypatch.setattr(fast_load, "FAST_MIN_BYTES", fast_min)
    folder = _mixed_folder(tmp_path)
    a, b, la, ca = assert_same_validate([folder], client, chunk_bytes=3000)
    assert la.errors > 40 and any(s.endswith("notes.txt") for s in la.skipped)
    messages = [m for (m,) in b.execute("SELECT message FROM load_errors").fetchall()]
    assert any("appears twice in this file (first at line" in m for m in messages)
    assert any("is already loaded from" in m for m in messages)
    assert any("out of range" in m for m in messages)
    assert any("holds no hands" in m for m in messages)


def test_database_already_loaded_and_files_loaded_again(tmp_path, client, monkeypatch):
    monkeypatch.setattr(fast_load, "FAST_MIN_BYTES", 0)
    folder = _mixed_folder(tmp_path)
    first = [folder / "a.jsonl", folder / "s.spn"]
    a, b = connect(None), connect(None)
    for con in (a, b):
        load_fast(con, first)
    # a.jsonl and s.spn again (their old rows go at their turn), b.jsonl clashes with both
    assert_same_validate([folder / "b.jsonl", folder / "a.jsonl", folder / "s.csv", folder / "edges.jsonl"], client, a, b, chunk_bytes=5000)
    # the check alone, and the load alone
    s_a, s_b = check_compiled(a, rules="barmore"), D.check_dask(b, rules="barmore", address=client, partitions=3)
    assert_same_tables(a, b)
    assert _check(s_a) == _check(s_b)
    c, d = connect(None), connect(None)
    assert _files(load_fast(c, [folder])) == _files(D.load_dask(d, [folder], address=client, chunk_bytes=2000))
    for t in TABLES[:8]:
        assert _rows(c, t) == _rows(d, t), t


def test_a_file_loaded_again_from_another_folder_replaces_its_hands(tmp_path, client, monkeypatch):
    """The same file named from another working directory is the same file over Dask too."""
    monkeypatch.setattr(fast_load, "FAST_MIN_BYTES", 0)
    (tmp_path / "logs").mkdir()
    recs = _season(tmp_path, games=4)
    g = tmp_path / "logs" / "g.jsonl"
    write_season(recs, g)
    a, b = connect(None), connect(None)
    monkeypatch.chdir(tmp_path)
    load_fast(a, ["logs/g.jsonl"])
    load_fast(b, ["logs/g.jsonl"])
    monkeypatch.chdir(tmp_path / "logs")
    la, _ = COMPILED.validate(a, ["g.jsonl"])
    lb, _ = D.validate_dask(b, ["g.jsonl"], address=client, chunk_bytes=20_000)
    assert (lb.hands, lb.errors) == (la.hands, la.errors) == (len(recs), 0)
    assert_same_tables(a, b)
    assert b.execute("SELECT DISTINCT source_file FROM hands").fetchall() == [("g.jsonl",)]


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def test_command_line_same_output_and_exit(tmp_path, client, monkeypatch):
    folder = _mixed_folder(tmp_path / "logs")
    address = client.scheduler.address
    single = _cli("validate", str(folder), "--db", str(tmp_path / "one.duckdb"), "--engine", "compiled", "-q")
    spread = _cli("validate", str(folder), "--db", str(tmp_path / "many.duckdb"), "--dask", address, "-q")
    assert single.exit_code == spread.exit_code == 2  # rejected records
    assert single.output == spread.output
    assert "Loaded" in spread.output and "Checked" in spread.output
    a, b = connect(tmp_path / "one.duckdb", read_only=True), connect(tmp_path / "many.duckdb", read_only=True)
    assert_same_tables(a, b)
    a.close(), b.close()
    # a clean season: exit 1 with findings, the same sentences
    write_season(_season(tmp_path, games=6), tmp_path / "season.jsonl")
    single = _cli("validate", str(tmp_path / "season.jsonl"), "--engine", "compiled", "-q", "--limit", "2")
    spread = _cli("validate", str(tmp_path / "season.jsonl"), "--dask", address, "-q", "--limit", "2")
    assert single.exit_code == spread.exit_code == 1
    assert single.output == spread.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_exits_2_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(D, "CONNECT_TIMEOUT", 0.5)
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(orjson.dumps(o) for o in _season_objs(1)) + b"\n")
    address = f"tcp://127.0.0.1:{_free_port()}"
    r = _cli("validate", str(tmp_path / "a.jsonl"), "--dask", address, "--db", str(tmp_path / "x.duckdb"))
    assert r.exit_code == 2
    assert f"cannot reach the Dask scheduler at {address}" in r.output
    con = connect(tmp_path / "x.duckdb", read_only=True)
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == 0  # nothing written
    con.close()


def _one_log(tmp_path) -> str:
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(orjson.dumps(o) for o in _season_objs(1)) + b"\n")
    return str(tmp_path / "a.jsonl")


def test_something_else_listening_at_the_address_exits_2_in_time(tmp_path, monkeypatch):
    """A port where something that is not a scheduler answers (the dashboard's, a web server) made
    validate wait for ever: distributed's own timeout does not hold there (found by a Dask audit)."""
    monkeypatch.setattr(D, "CONNECT_TIMEOUT", 0.5)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    address = f"127.0.0.1:{server.getsockname()[1]}"
    try:  # the connection is accepted by the system and never answered
        r = _cli("validate", _one_log(tmp_path), "--dask", address, "-q")
    finally:
        server.close()
    assert r.exit_code == 2
    assert f"cannot reach the Dask scheduler at {address}: no answer in 1.75 s" in r.output


def test_a_scheduler_without_workers_exits_2_saying_to_start_one(tmp_path, monkeypatch):
    """The tasks waited for a worker for ever (found by a Dask audit)."""
    import distributed

    monkeypatch.setattr(D, "WORKER_WAIT", 0.5)
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=":0") as cluster:
        r = _cli("validate", _one_log(tmp_path), "--dask", cluster.scheduler_address, "-q", "--db", str(tmp_path / "x.duckdb"))
    assert r.exit_code == 2
    assert f"the Dask scheduler at {cluster.scheduler_address} has no worker (waited 0.5 s): start one with `dask worker" in r.output
    con = connect(tmp_path / "x.duckdb", read_only=True)
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == 0  # nothing written
    con.close()


@pytest.mark.parametrize(("address", "says"), [
    ("", "give local, local:N"),
    ("udp://127.0.0.1:8786", "give local, local:N"),
    ("inproc://x", "cannot reach the Dask scheduler at inproc://x"),
    ("tls://127.0.0.1:1", "cannot reach the Dask scheduler at tls://127.0.0.1:1: TLS expects"),
])  # fmt: skip
def test_an_address_that_cannot_name_a_scheduler_exits_2(tmp_path, address, says):
    """An empty --dask ran without Dask; inproc:// failed on "not enough values to unpack"; tls://
    without its settings raised a TypeError (exit 1, as if findings were found)."""
    r = _cli("validate", _one_log(tmp_path), "--dask", address, "-q", "--db", str(tmp_path / "x.duckdb"))
    assert r.exit_code == 2
    assert says in r.output


def test_worker_failure_exits_2_with_its_exception(tmp_path, client, monkeypatch):
    def broken(table, rules=None):
        raise RuntimeError("the core met a bad hand")

    monkeypatch.setattr(storage, "check_part", broken)  # the workers are threads of this process
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(orjson.dumps(o) for o in _season_objs(1)) + b"\n")
    work = tmp_path / "work"
    work.mkdir()
    r = _cli("validate", str(tmp_path / "a.jsonl"), "--dask", client.scheduler.address, "--db", str(tmp_path / "x.duckdb"),
             "--dask-output", str(work))  # fmt: skip
    assert r.exit_code == 2
    assert "a Dask worker failed while checking the games: RuntimeError: the core met a bad hand" in r.output
    assert list(work.iterdir()) == []  # the other tasks finished before the working folder went
    con = connect(tmp_path / "x.duckdb", read_only=True)
    assert con.execute("SELECT count(*) FROM hands").fetchone()[0] == 0
    con.close()


def test_without_dask_exits_2_saying_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(orjson.dumps(o) for o in _season_objs(1)) + b"\n")
    r = _cli("validate", str(tmp_path / "a.jsonl"), "--dask", "local")
    assert r.exit_code == 2
    assert "pip install 'spadework[dask]'" in r.output


@pytest.mark.parametrize("shape", ["lone CR line ends", "a CR in a long first line", "a byte-order mark"])
def test_a_large_file_that_open_binary_changes_reads_the_same_over_dask(tmp_path, client, monkeypatch, shape):
    """Dask reads a large plain JSON Lines file in byte ranges of the file itself, while every other
    reader sees it through open_binary.  A file whose lines end in lone CRs read as one bad line
    over Dask (every hand lost; found by a parity fuzz), and a file whose first line, longer than a
    peek, holds a CR as JSON white space was taken for a lone-CR file by the other readers (its
    first line split in two).  Ranges are now taken only of files open_binary hands out as stored."""
    monkeypatch.setattr(fast_load, "FAST_MIN_BYTES", 0)
    objs = _season_objs(3, seed=4)
    lines = [orjson.dumps(o) for o in objs]
    if shape == "lone CR line ends":
        data = b"\r".join(lines) + b"\r"
    elif shape == "a CR in a long first line":
        first = orjson.dumps(dict(objs[0], x_pad="p" * 9000)).replace(b',"dealer"', b',\r"dealer"', 1)
        data = b"\n".join([first, *lines[1:]]) + b"\n"
    else:
        data = b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n"
    path = tmp_path / "season.jsonl"
    path.write_bytes(data)
    a, b, la, ca = assert_same_validate([path], client)
    assert (la.hands, la.errors) == (len(objs), 0)
    ref = connect(None)
    from spadework.analysis.engine.engines import REFERENCE

    lr, _ = REFERENCE.validate(ref, [path])
    assert (lr.hands, lr.errors) == (len(objs), 0)
    assert_same_tables(a, ref)
