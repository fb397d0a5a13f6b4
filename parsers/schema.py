"""The DuckDB tables of TABLES.md: their DDL, and how they are stored, in one place.

TABLES.md is a contract on what a query sees.  Two layouts give it:

- **stored** (what :func:`spadework.parsers.db.connect` creates; every loader and checker writes
  it): one row per hand in ``hand_records`` holds everything a log says about the hand, with
  the deal, the play, the recorded leaders and winners and the bids as lists of small integer
  ids (:mod:`spadework.parsers.encoding`); one row per checked hand in ``checked_tricks`` holds
  the replayed leaders, led suits, winners and spades-broken flags.  The contract tables
  ``hands``, ``deals``, ``bids``, ``plays``, ``recorded_tricks``, ``recorded_scores`` and
  ``tricks`` are views over them (:data:`VIEWS`) with exactly the columns below;
  ``hand_scores``, ``violations``, ``games``, ``load_errors`` and ``load_warnings`` are tables.
  Loading writes one row per hand instead of about 125, and the checker reads the lists
  straight into numpy (DuckDB hands a ``UTINYINT`` list to Arrow as one contiguous buffer).
- **plain**: every contract table a real table (:func:`create_tables`), for databases built
  by hand (test fixtures) and databases written before the stored layout;
  :func:`spadework.parsers.db.connect` converts a plain database it may write to.

No primary keys are declared: a log that breaks the rules (a card dealt twice) must still load
as written.  The logical keys are documented on each table and kept by the loader and the checker.
"""

from __future__ import annotations

from spadework.parsers.encoding import CARD_SQL, PLAY_SUIT_SQL, SEAT_SQL, SIDE_SQL

LOADED_TABLES: dict[str, str] = {
    # key: game_id, hand
    "hands": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        event VARCHAR,
        date VARCHAR,
        table_name VARCHAR,
        round VARCHAR,
        rules VARCHAR,
        rules_is_object BOOLEAN,
        dealer VARCHAR,
        player_n VARCHAR,
        player_e VARCHAR,
        player_s VARCHAR,
        player_w VARCHAR,
        taken_n INTEGER,
        taken_e INTEGER,
        taken_s INTEGER,
        taken_w INTEGER,
        has_deal BOOLEAN,
        has_tricks BOOLEAN,
        winner VARCHAR,
        extras VARCHAR,
        source_file VARCHAR,
        source_line INTEGER
    """,
    # key: game_id, hand, seat, card_order (a card dealt twice loads as written)
    "deals": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        seat VARCHAR NOT NULL,
        card VARCHAR NOT NULL,
        card_order INTEGER NOT NULL,
        inferred BOOLEAN NOT NULL
    """,
    # key: game_id, hand, bid_order
    "bids": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        bid_order INTEGER NOT NULL,
        seat VARCHAR NOT NULL,
        bid INTEGER,
        nil BOOLEAN NOT NULL,
        blind BOOLEAN NOT NULL,
        bid_value DOUBLE NOT NULL
    """,
    # key: game_id, hand, trick, play_order
    "plays": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        trick INTEGER NOT NULL,
        play_order INTEGER NOT NULL,
        seat VARCHAR NOT NULL,
        card VARCHAR NOT NULL
    """,
    # key: game_id, hand, trick: the leader and winner as the log recorded them
    "recorded_tricks": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        trick INTEGER NOT NULL,
        leader VARCHAR NOT NULL,
        winner VARCHAR
    """,
    # key: game_id, hand, side
    "recorded_scores": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        side VARCHAR NOT NULL,
        points INTEGER,
        total INTEGER,
        bags INTEGER,
        taken INTEGER,
        winner VARCHAR,
        score_before INTEGER,
        bags_before INTEGER
    """,
    # key: source_file, source_line
    "load_errors": """
        source_file VARCHAR NOT NULL,
        source_line INTEGER NOT NULL,
        message VARCHAR NOT NULL,
        raw VARCHAR
    """,
    # notes from importers on records that did load (an option that could not be mapped...)
    "load_warnings": """
        source_file VARCHAR NOT NULL,
        source_line INTEGER,
        game_id VARCHAR,
        hand INTEGER,
        message VARCHAR NOT NULL
    """,
}

DERIVED_TABLES: dict[str, str] = {
    # key: game_id, hand, trick
    "tricks": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        trick INTEGER NOT NULL,
        leader VARCHAR,
        led_suit VARCHAR,
        winner VARCHAR,
        spades_broken BOOLEAN
    """,
    # one row per finding
    "violations": """
        game_id VARCHAR NOT NULL,
        hand INTEGER,
        trick INTEGER,
        seat VARCHAR,
        card VARCHAR,
        side VARCHAR,
        code VARCHAR NOT NULL,
        message VARCHAR NOT NULL,
        field VARCHAR,
        recorded VARCHAR,
        expected VARCHAR,
        player VARCHAR
    """,
    # key: game_id, hand, side.  The official score: as played, or after the renege penalty when the
    # ruleset sets one (scoring = 'after_penalty'), the as-played values then beside it (as_played_*,
    # null otherwise; RULES.md section 5; the view hand_scores_as_played reads them).  contract is the
    # whole number nearest the bids' sum; contract_value the sum itself (7.5 after a bid of 4.5, which
    # is BID_INVALID but scored as recorded, RULES.md section 3).  Points and totals are BIGINT: a bid
    # as large as the INTEGER columns hold scores ten times that, and totals add up hand after hand
    "hand_scores": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        side VARCHAR NOT NULL,
        contract BIGINT,
        tricks INTEGER,
        made BOOLEAN,
        bags_this_hand INTEGER,
        bag_penalty BIGINT,
        nil_points BIGINT,
        points BIGINT,
        total BIGINT,
        bags INTEGER,
        scoring VARCHAR NOT NULL DEFAULT 'as_played',
        as_played_tricks INTEGER,
        as_played_made BOOLEAN,
        as_played_bags_this_hand INTEGER,
        as_played_bag_penalty BIGINT,
        as_played_nil_points BIGINT,
        as_played_points BIGINT,
        as_played_total BIGINT,
        as_played_bags INTEGER,
        contract_value DOUBLE
    """,
    # key: game_id
    "games": """
        game_id VARCHAR NOT NULL,
        rules VARCHAR,
        hands INTEGER,
        total_ns BIGINT,
        total_ew BIGINT,
        winner VARCHAR,
        ended_at_hand INTEGER
    """,
}

# --- double-dummy analysis (issue 14; filled by `spadework analyse`, spadework.analysis.solver.judge) ---
# Kept as a separate block: these tables are written by the solver, not by the loader or checker.
ANALYSIS_TABLES: dict[str, str] = {
    # key: game_id, hand, trick, play_order: one row per card judged
    "card_costs": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        trick INTEGER NOT NULL,
        play_order INTEGER NOT NULL,
        seat VARCHAR NOT NULL,
        player VARCHAR,
        card VARCHAR NOT NULL,
        tricks_best INTEGER NOT NULL,
        tricks_played INTEGER NOT NULL,
        cost INTEGER NOT NULL,
        best_cards VARCHAR NOT NULL
    """,
    # key: game_id, hand: tricks each side takes from trick 1 with best play by all four
    "dd_par": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        ns_tricks INTEGER NOT NULL,
        ew_tricks INTEGER NOT NULL
    """,
}

ALL_TABLES: dict[str, str] = LOADED_TABLES | DERIVED_TABLES | ANALYSIS_TABLES
"""Every contract table (TABLES.md and our additional columns) with its columns as DDL."""

# Judged by spadework.analysis.handvalue (issue 14 item 3), written by `spadework judge-bids`; not
# created with the others (a database without them gets temporary ones computed on first use).
HAND_VALUE_TABLES: dict[str, str] = {
    # key: game_id, hand, seat; one row per seat of each hand with a complete, valid deal
    "hand_values": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        seat VARCHAR NOT NULL,
        player VARCHAR,
        estimate DOUBLE NOT NULL,
        expected_tricks DOUBLE NOT NULL,
        bid INTEGER,
        bid_error DOUBLE,
        nil BOOLEAN,
        blind BOOLEAN,
        taken INTEGER,
        nil_chance DOUBLE NOT NULL,
        side_honours DOUBLE NOT NULL,
        trump_honours DOUBLE NOT NULL,
        trump_length DOUBLE NOT NULL,
        ruffs DOUBLE NOT NULL,
        side_hcp INTEGER NOT NULL,
        trump_hcp INTEGER NOT NULL,
        trumps INTEGER NOT NULL
    """,
    # key: model, term: the fitted coefficients and the fit's statistics
    "hand_value_fit": """
        model VARCHAR NOT NULL,
        term VARCHAR NOT NULL,
        value DOUBLE NOT NULL
    """,
}


def column_types(ddl: str) -> list[tuple[str, str]]:
    """``(name, type)`` of each column of one of the DDL strings above, in order."""
    cols = []
    for line in ddl.strip().splitlines():
        parts = line.strip().rstrip(",").split()
        if parts:
            cols.append((parts[0], parts[1]))
    return cols


def declared_columns(ddl: str) -> list[str]:
    """The column names of one of the DDL strings above, in order."""
    return [name for name, _ in column_types(ddl)]


def _seats_view() -> str:
    from spadework.parsers.seats import SEATS

    seat_list = ", ".join(f"('{s}', '{s.side}', '{s.partner}', {int(s)})" for s in SEATS)

    def by_seat(column: str, prefix: str) -> str:
        return f"CASE {column} " + " ".join(f"WHEN '{s}' THEN h.{prefix}_{str(s).lower()}" for s in SEATS) + " END"

    return f"""
        WITH seat_list(seat, side, partner_seat, seat_index) AS (VALUES {seat_list}),
        first_bids AS (
            SELECT game_id, hand, seat, bid, nil, blind FROM bids
            QUALIFY row_number() OVER (PARTITION BY game_id, hand, seat ORDER BY bid_order) = 1
        ), replayed AS (SELECT game_id, hand, count(winner) AS with_winner FROM tricks GROUP BY ALL),
        won AS (SELECT game_id, hand, winner AS seat, count(*) AS taken FROM tricks GROUP BY ALL)
        SELECT h.game_id, h.hand, s.seat, s.side,
               {by_seat("s.seat", "player")} AS player, {by_seat("s.partner_seat", "player")} AS partner,
               b.bid, b.nil, b.blind,
               CAST(CASE WHEN r.with_winner = 13 THEN coalesce(w.taken, 0)
                         WHEN {by_seat("s.seat", "taken")} IS NOT NULL THEN {by_seat("s.seat", "taken")}
                         WHEN r.game_id IS NOT NULL THEN coalesce(w.taken, 0) END AS INTEGER) AS taken
        FROM hands h CROSS JOIN seat_list s
        LEFT JOIN first_bids b ON b.game_id = h.game_id AND b.hand = h.hand AND b.seat = s.seat
        LEFT JOIN replayed r ON r.game_id = h.game_id AND r.hand = h.hand
        LEFT JOIN won w ON w.game_id = h.game_id AND w.hand = h.hand AND w.seat = s.seat
    """


AS_PLAYED_COLUMNS = ("tricks", "made", "bags_this_hand", "bag_penalty", "nil_points", "points", "total", "bags")
"""The ``hand_scores`` values a renege penalty can change: under one, the row holds the official
(after-penalty) values and ``as_played_<column>`` the values as played."""


def _as_played_view() -> str:
    picked = ", ".join(f"CASE WHEN scoring = 'after_penalty' THEN as_played_{c} ELSE {c} END AS {c}" for c in AS_PLAYED_COLUMNS)
    return f"SELECT game_id, hand, side, contract, {picked}, 'as_played' AS scoring, contract_value FROM hand_scores"


VIEWS: dict[str, str] = {
    # one row per game, hand and seat: who sat there, the partner, the seat's first bid and the tricks it
    # took, as the scorer counts them (RULES.md 5.6): the replay's trick winners when all 13 tricks have
    # one, else the log's tricks-taken record (a claimed hand: some tricks played, then the count), else
    # the tricks played; so per-player SQL needs no four-way CASE over player_n .. player_w
    "seats": _seats_view(),
    # one row per game, hand and side: the score as played (the same as hand_scores' but under a
    # renege penalty, where hand_scores holds the official score after it); what the metrics of
    # play and bidding read
    "hand_scores_as_played": _as_played_view(),
}
"""Views over the tables (created with them; they read whatever the tables hold when queried)."""


def create_views(con, temp: bool = False) -> None:
    """(Re)create the :data:`VIEWS`; ``temp`` makes temporary ones (for a database opened read-only).
    The tables they read must exist."""
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE {'TEMP ' if temp else ''}VIEW {name} AS {sql}")


def table_names(con) -> set[str]:
    """The names of the tables of ``con``'s own database (temporary ones left out)."""
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()}


def create_tables(con, tables: dict[str, str] | None = None) -> None:
    """Create every contract table that does not exist yet as a plain table (the *plain* layout), then
    the :data:`VIEWS` once every table they read exists.

    For databases built by hand (test fixtures, a notebook's scratch database); a loader's
    database uses the stored layout (:func:`create_storage`).  ``con`` is a
    ``duckdb.DuckDBPyConnection``.
    """
    for name, columns in (tables or ALL_TABLES).items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
    if set(ALL_TABLES) <= table_names(con):
        create_views(con)


# --- the stored layout --------------------------------------------------------------------------

_SCORE_COLUMNS = tuple(f"{k}_{side}" for side in ("ns", "ew") for k in ("points", "total", "bags"))
_BEFORE_COLUMNS = ("score_before_ns", "score_before_ew", "bags_before_ns", "bags_before_ew")

STORED_TABLES: dict[str, str] = {
    # key: game_id, hand.  Everything a log says about one hand (the six loaded views read it).
    # Ids: cards 0..53 (encoding.CARD_CODES), seats 0..3 (N E S W), sides 0..1 (NS EW), 255 none.
    "hand_records": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        event VARCHAR,
        date VARCHAR,
        table_name VARCHAR,
        round VARCHAR,
        rules VARCHAR,
        rules_is_object BOOLEAN,
        dealer UTINYINT,
        player_n VARCHAR,
        player_e VARCHAR,
        player_s VARCHAR,
        player_w VARCHAR,
        taken_n INTEGER,
        taken_e INTEGER,
        taken_s INTEGER,
        taken_w INTEGER,
        has_deal BOOLEAN,
        has_tricks BOOLEAN,
        winner UTINYINT,
        extras VARCHAR,
        source_file VARCHAR,
        source_line INTEGER,
        points_ns INTEGER,
        total_ns INTEGER,
        bags_ns INTEGER,
        points_ew INTEGER,
        total_ew INTEGER,
        bags_ew INTEGER,
        score_before_ns INTEGER,
        score_before_ew INTEGER,
        bags_before_ns INTEGER,
        bags_before_ew INTEGER,
        bid_seats UTINYINT[],
        bid_values DOUBLE[],
        bid_nils BOOLEAN[],
        bid_blinds BOOLEAN[],
        deal UINTEGER[],
        play USMALLINT[],
        tricks USMALLINT[]
    """,
    # key: game_id, hand.  The checker's replay of one hand: one packed value per trick (see
    # PACKING): its number, leader, winner, led suit and whether spades were broken when it was led.
    "checked_tricks": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        tricks USMALLINT[] NOT NULL
    """,
}
"""The tables of the stored layout that hold the views' rows (see the module doc and PACKING)."""

PACKING = """How the lists of ``hand_records`` and ``checked_tricks`` pack one row of a view into one integer
(a view then unpacks it with shifts and masks: as cheap to scan as a table, and the checker takes the
low bits as card ids without a copy).  Ids are those of spadework.parsers.encoding.

- ``hand_records.deal`` (UINTEGER, seat by seat N E S W, each seat's cards in their order):
  ``card | seat << 6 | card_order << 8`` (card_order from 1); the effective deal: the recorded one,
  else (``has_deal`` false) the one inferred from a complete play; NULL when there is none.
- ``hand_records.play`` (USMALLINT, in play order): ``card | seat << 6 | play_order << 8 | trick << 11``
  (play_order 1..4, trick 1..15); NULL when no tricks are recorded.
- ``hand_records.tricks`` (USMALLINT, one per recorded trick, in order):
  ``leader | winner << 2 | trick << 5`` with winner 4 when none is recorded; NULL when no tricks.
- ``checked_tricks.tricks`` (USMALLINT, one per replayed trick, in order):
  ``leader | winner << 2 | led_suit << 5 | spades_broken << 8 | trick << 9`` with winner 4 when the
  trick is incomplete and led_suit 7 when none (led_suit ids: encoding.PLAY_SUIT_CODES).
"""

NO_WINNER = 4
"""The winner field of a packed trick when there is none (SEAT_SQL[4 + 1] is NULL)."""
NO_LED_SUIT = 7
"""The led-suit field of a packed checked trick when there is none."""
MAX_TRICKS = 15
"""The most tricks a packed play can number (parsers allow 13)."""


def pack_deal_card(card: int, seat: int, order: int) -> int:
    """One ``hand_records.deal`` value (``order`` from 1; see PACKING)."""
    return card | seat << 6 | order << 8


def pack_play(card: int, seat: int, play_order: int, trick: int) -> int:
    """One ``hand_records.play`` value (``play_order`` 1..4, ``trick`` 1..15; see PACKING)."""
    return card | seat << 6 | play_order << 8 | trick << 11


def pack_trick(leader: int, winner: int | None, trick: int) -> int:
    """One ``hand_records.tricks`` value (``winner`` None when not recorded; see PACKING)."""
    return leader | (NO_WINNER if winner is None else winner) << 2 | trick << 5


def pack_checked_trick(leader: int, winner: int | None, led_suit: int | None, broken: bool, trick: int) -> int:
    """One ``checked_tricks.tricks`` value (see PACKING)."""
    return (
        leader
        | (NO_WINNER if winner is None else winner) << 2
        | (NO_LED_SUIT if led_suit is None else led_suit) << 5
        | int(broken) << 8
        | trick << 9
    )


_SIDE_OF = {"NS": ("ns", "n", "s"), "EW": ("ew", "e", "w")}

STORED_VIEWS: dict[str, str] = {
    "hands": f"""
        SELECT game_id, hand, event, date, table_name, round, rules, rules_is_object,
               {SEAT_SQL}[dealer + 1] AS dealer, player_n, player_e, player_s, player_w,
               taken_n, taken_e, taken_s, taken_w, has_deal, has_tricks, {SIDE_SQL}[winner + 1] AS winner,
               extras, source_file, source_line
        FROM hand_records""",
    "deals": f"""
        SELECT game_id, hand, {SEAT_SQL}[((x >> 6) & 3) + 1] AS seat, {CARD_SQL}[(x & 63) + 1] AS card,
               CAST(x >> 8 AS INTEGER) AS card_order, NOT has_deal AS inferred
        FROM (SELECT game_id, hand, has_deal, unnest(deal) AS x FROM hand_records)""",
    "bids": f"""
        SELECT game_id, hand, CAST(bid_order AS INTEGER) AS bid_order, {SEAT_SQL}[seat + 1] AS seat,
               CASE WHEN bid_value = trunc(bid_value) THEN CAST(bid_value AS INTEGER) END AS bid,
               nil, blind, bid_value
        FROM (SELECT game_id, hand, generate_subscripts(bid_seats, 1) AS bid_order, unnest(bid_seats) AS seat,
                     unnest(bid_values) AS bid_value, unnest(bid_nils) AS nil, unnest(bid_blinds) AS blind
              FROM hand_records)""",
    "plays": f"""
        SELECT game_id, hand, CAST(x >> 11 AS INTEGER) AS trick, CAST((x >> 8) & 7 AS INTEGER) AS play_order,
               {SEAT_SQL}[((x >> 6) & 3) + 1] AS seat, {CARD_SQL}[(x & 63) + 1] AS card
        FROM (SELECT game_id, hand, unnest(play) AS x FROM hand_records)""",
    "recorded_tricks": f"""
        SELECT game_id, hand, CAST(x >> 5 AS INTEGER) AS trick, {SEAT_SQL}[(x & 3) + 1] AS leader,
               {SEAT_SQL}[((x >> 2) & 7) + 1] AS winner
        FROM (SELECT game_id, hand, unnest(tricks) AS x FROM hand_records)""",
    "recorded_scores": "\n        UNION ALL".join(
        f"""
        SELECT game_id, hand, '{side}' AS side, points_{sd} AS points, total_{sd} AS total, bags_{sd} AS bags,
               TRY_CAST(CAST(taken_{a} AS BIGINT) + taken_{b} AS INTEGER) AS taken, {SIDE_SQL}[winner + 1] AS winner,
               score_before_{sd} AS score_before, bags_before_{sd} AS bags_before
        FROM hand_records"""
        for side, (sd, a, b) in _SIDE_OF.items()
    ),
    "tricks": f"""
        SELECT game_id, hand, CAST(x >> 9 AS INTEGER) AS trick, {SEAT_SQL}[(x & 3) + 1] AS leader,
               {PLAY_SUIT_SQL}[((x >> 5) & 7) + 1] AS led_suit, {SEAT_SQL}[((x >> 2) & 7) + 1] AS winner,
               ((x >> 8) & 1) = 1 AS spades_broken
        FROM (SELECT game_id, hand, unnest(tricks) AS x FROM checked_tricks)""",
}
"""The contract tables that are views in the stored layout: name -> the SELECT behind it.  Each
gives exactly the columns (names, types, order) of :data:`ALL_TABLES`; ``tests/test_storage.py``
checks it.  (:data:`VIEWS` are views over the contract tables in either layout.)"""

LAYOUT_TABLES: dict[str, str] = STORED_TABLES | {k: v for k, v in ALL_TABLES.items() if k not in STORED_VIEWS}
"""Every real table of the stored layout."""


LOADED_FILES_COLUMNS = "source_file VARCHAR NOT NULL, path VARCHAR NOT NULL"
"""The loader's own table of the files loaded so far (``spadework.parsers.db.LOADED_FILES``): made
with the stored layout, so every loaded database has it, whatever its files were."""


def create_loaded_files(con) -> None:
    """Create the loader's ``loaded_files`` table where missing (:data:`LOADED_FILES_COLUMNS`)."""
    con.execute(f"CREATE TABLE IF NOT EXISTS loaded_files ({LOADED_FILES_COLUMNS})")


def create_storage(con) -> None:
    """Create the stored layout's tables and views where missing (see the module doc).

    Raises ``ValueError`` on a database in the plain layout (convert it with
    :func:`spadework.parsers.db.connect`, which does so when it may write)."""
    if storage_layout(con) == "plain":
        raise ValueError("this database keeps its tables in the plain layout; open it with spadework.parsers.db.connect to convert it")
    for name, columns in LAYOUT_TABLES.items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
    for name, sql in STORED_VIEWS.items():
        con.execute(f"CREATE VIEW IF NOT EXISTS {name} AS {sql}")
    create_loaded_files(con)
    create_views(con)


def storage_layout(con) -> str:
    """``"stored"`` when the database holds ``hand_records``, ``"plain"`` when it holds a ``hands``
    table instead, ``"empty"`` when it holds neither (of the current database and schema)."""
    names = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    }
    if "hand_records" in names:
        return "stored"
    if "hands" in names:
        return "plain"
    return "empty"


_ARROW_TYPES = {
    "VARCHAR": "string",
    "INTEGER": "int32",
    "BOOLEAN": "bool_",
    "UTINYINT": "uint8",
    "USMALLINT": "uint16",
    "UINTEGER": "uint32",
    "DOUBLE": "float64",
    "BIGINT": "int64",
}


def arrow_schema(ddl: str):
    """The ``pyarrow.Schema`` of a DDL string of this module (``UTINYINT[]`` -> ``list<uint8>``...)."""
    import pyarrow as pa

    def typ(sql: str):
        if sql.endswith("[]"):
            return pa.list_(typ(sql[:-2]))
        return getattr(pa, _ARROW_TYPES[sql])()

    return pa.schema([(name, typ(sql)) for name, sql in column_types(ddl)])
