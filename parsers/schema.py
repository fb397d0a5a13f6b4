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
        expected VARCHAR
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


def create_tables(con, tables: dict[str, str] | None = None) -> None:
    """Create every table of TABLES.md (and our additions) that does not exist yet.

    ``con`` is a ``duckdb.DuckDBPyConnection``.
    """
    for name, columns in (tables or ALL_TABLES).items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
