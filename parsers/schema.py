"""The DuckDB tables of TABLES.md: their DDL, in one place.

Loaded tables hold what the logs say; derived tables hold what the checker
computes.  No primary keys are declared: a log that breaks the rules (a card
dealt twice) must still load as written.  The logical keys are documented on
each table and kept by the loader and the checker.
"""

from __future__ import annotations

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
    # key: game_id, hand, side (scoring = 'as_played' or 'after_penalty' when a renege penalty is set)
    "hand_scores": """
        game_id VARCHAR NOT NULL,
        hand INTEGER NOT NULL,
        side VARCHAR NOT NULL,
        contract INTEGER,
        tricks INTEGER,
        made BOOLEAN,
        bags_this_hand INTEGER,
        bag_penalty INTEGER,
        nil_points INTEGER,
        points INTEGER,
        total INTEGER,
        bags INTEGER,
        scoring VARCHAR NOT NULL DEFAULT 'as_played'
    """,
    # key: game_id
    "games": """
        game_id VARCHAR NOT NULL,
        rules VARCHAR,
        hands INTEGER,
        total_ns INTEGER,
        total_ew INTEGER,
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
        ), replayed AS (SELECT DISTINCT game_id, hand FROM tricks),
        won AS (SELECT game_id, hand, winner AS seat, count(*) AS taken FROM tricks GROUP BY ALL)
        SELECT h.game_id, h.hand, s.seat, s.side,
               {by_seat("s.seat", "player")} AS player, {by_seat("s.partner_seat", "player")} AS partner,
               b.bid, b.nil, b.blind,
               CAST(CASE WHEN r.game_id IS NOT NULL THEN coalesce(w.taken, 0)
                         ELSE {by_seat("s.seat", "taken")} END AS INTEGER) AS taken
        FROM hands h CROSS JOIN seat_list s
        LEFT JOIN first_bids b ON b.game_id = h.game_id AND b.hand = h.hand AND b.seat = s.seat
        LEFT JOIN replayed r ON r.game_id = h.game_id AND r.hand = h.hand
        LEFT JOIN won w ON w.game_id = h.game_id AND w.hand = h.hand AND w.seat = s.seat
    """


VIEWS: dict[str, str] = {
    # one row per game, hand and seat: who sat there, the partner, the seat's first bid and the tricks it
    # took (the checker's replay where the hand was replayed, else the log's count), so per-player SQL
    # needs no four-way CASE over player_n .. player_w
    "seats": _seats_view(),
}
"""Views over the tables (created with them; they read whatever the tables hold when queried)."""


def create_views(con, temp: bool = False) -> None:
    """(Re)create the :data:`VIEWS`; ``temp`` makes temporary ones (for a database opened read-only).
    The tables they read must exist."""
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE {'TEMP ' if temp else ''}VIEW {name} AS {sql}")


def create_tables(con, tables: dict[str, str] | None = None) -> None:
    """Create every table of TABLES.md (and our additions) that does not exist yet, then the
    :data:`VIEWS` once every table they read exists.

    ``con`` is a ``duckdb.DuckDBPyConnection``.
    """
    for name, columns in (tables or ALL_TABLES).items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()}
    if set(ALL_TABLES) <= have:
        create_views(con)
