"""A tiny hand-computed database for the analysis tests (metrics, charts, report, notebooks).

Three games, six hands, four players (ana, bo, cy, di); every number the tests expect is worked
out by hand in the comments below and in tests/test_metrics.py.

G1 (table T1, round 1, event Club, 2024-03-14, rules {"preset": "standard", "target": 200}), a
score sheet (no card play) that starts mid-game: score_before NS 20 / EW 30, bags_before NS 2 / EW 8.
Seats N ana, E bo, S cy, W di.

| hand | dealer | bids (in order)            | taken N E S W | NS: contract tricks points total bags | EW: contract tricks points total bags |
|------|--------|----------------------------|---------------|----------------------------------------|----------------------------------------|
| 1    | N      | E 4, S nil, W 4, N 4       | 4 5 1 3       | 4 5 (41 - 100 nil) -59  -39  3         | 8 8 80 110 8                           |
| 2    | E      | S 3, W 3, N 4, E 3         | 3 5 3 2       | 7 6 set -70  -109  3                   | 6 7 61 171 9                           |
| 3    | S      | W 3, N blind nil, E 3, S 5 | 0 4 5 4       | 5 5 (50 + 200) 250  141  3             | 6 8 (62 - 100 penalty) -38 133 1       |
| 4    | W      | E 4 (early), N 3, S 4, W 3 | 4 3 3 3       | 7 7 70  211  3                         | 7 6 set -70 63 1                       |

NS reaches 211 >= 200 after hand 4: NS wins G1.  Findings: SCORE_MISMATCH on hand 2 (EW total
recorded 175), BID_OUT_OF_TURN on hand 4 (seat E, bo).

G2 (table T2, round 2, event Club, 2024-04-02, standard), one hand with full card play and no taken
record.  Seats N ana, E cy, S di, W bo; dealer W; bids N 4, E 3, S nil, W 4.  Tricks (leader first):

     1 N: AC 2C 3C 4C -> N          8 W: 4S 5S AS 6S -> E
     2 N: KC 5C 6C 7C -> N          9 E: AD 5D 6D 7D -> E
     3 N: QC 8C 9C TC -> N         10 E: KD 8D 9D TH -> E   (N reneges: holds TD)
     4 N: JC 2S 2H 3S -> W         11 E: QD 4H 7H TD -> E
     5 W: AH 3H 2D 5H -> W         12 E: JD 7S 8S 9S -> N
     6 W: KH 6H 3D 8H -> W         13 N: TS JS QS KS -> W
     7 W: QH 9H 4D JH -> W

Taken N 4, E 4, S 0, W 5.  NS: contract 4, tricks 4, made 40 + nil 100 = 140.  EW: contract 7,
tricks 9, 70 + 2 bags = 72.  Spades broken in trick 4 by E (cy).  Finding: RENEGE trick 10, N, TH.

G3 (table T1, round 3, event League, 2024-05-01, barmore), one score-sheet hand.  Seats N bo,
E ana, S di, W cy; dealer N; bids E blind 7, S 3, N 4 (W silent).  Taken N 3, E 4, S 2, W 4.
NS: contract 7, tricks 5, set -70.  EW: blind seven made with 8 tricks: 141, 1 bag.
"""

from __future__ import annotations

import duckdb

from spadework.parsers.schema import create_tables

G1_RULES = '{"preset": "standard", "target": 200}'

G2_TRICKS = [
    ("N", ["AC", "2C", "3C", "4C"], "N"),
    ("N", ["KC", "5C", "6C", "7C"], "N"),
    ("N", ["QC", "8C", "9C", "TC"], "N"),
    ("N", ["JC", "2S", "2H", "3S"], "W"),
    ("W", ["AH", "3H", "2D", "5H"], "W"),
    ("W", ["KH", "6H", "3D", "8H"], "W"),
    ("W", ["QH", "9H", "4D", "JH"], "W"),
    ("W", ["4S", "5S", "AS", "6S"], "E"),
    ("E", ["AD", "5D", "6D", "7D"], "E"),
    ("E", ["KD", "8D", "9D", "TH"], "E"),
    ("E", ["QD", "4H", "7H", "TD"], "E"),
    ("E", ["JD", "7S", "8S", "9S"], "N"),
    ("N", ["TS", "JS", "QS", "KS"], "W"),
]
_ORDER = "NESW"


def _seats_from(leader: str) -> list[str]:
    i = _ORDER.index(leader)
    return [_ORDER[(i + k) % 4] for k in range(4)]


def build(con: duckdb.DuckDBPyConnection | None = None, *, evil_name: bool = False) -> duckdb.DuckDBPyConnection:
    """Create the tables and fill them with the fixture.  ``evil_name`` renames di to a script tag."""
    con = con or duckdb.connect()
    create_tables(con)
    di = "<script>alert(1)</script>" if evil_name else "di"
    hands = [
        # game, hand, event, date, table, round, rules, dealer, N, E, S, W, taken N E S W, has_deal, has_tricks, winner
        ("G1", 1, "Club", "2024-03-14", "T1", "1", G1_RULES, "N", "ana", "bo", "cy", di, 4, 5, 1, 3, False, False, None),
        ("G1", 2, "Club", "2024-03-14", "T1", "1", G1_RULES, "E", "ana", "bo", "cy", di, 3, 5, 3, 2, False, False, None),
        ("G1", 3, "Club", "2024-03-14", "T1", "1", G1_RULES, "S", "ana", "bo", "cy", di, 0, 4, 5, 4, False, False, None),
        ("G1", 4, "Club", "2024-03-14", "T1", "1", G1_RULES, "W", "ana", "bo", "cy", di, 4, 3, 3, 3, False, False, "NS"),
        ("G2", 1, "Club", "2024-04-02", "T2", "2", "standard", "W", "ana", "cy", di, "bo",
         None, None, None, None, False, True, None),
        ("G3", 1, "League", "2024-05-01", "T1", "3", "barmore", "N", "bo", "ana", di, "cy", 3, 4, 2, 4, False, False, None),
    ]
    con.executemany(
        "INSERT INTO hands (game_id, hand, event, date, table_name, round, rules, dealer, player_n, player_e, player_s,"
        " player_w, taken_n, taken_e, taken_s, taken_w, has_deal, has_tricks, winner, source_file, source_line)"
        " VALUES (" + ", ".join("?" for _ in range(19)) + ", 'fixture.jsonl', ?)",
        [h + (i + 1,) for i, h in enumerate(hands)],
    )
    bids = [
        # game, hand, order, seat, bid, nil, blind
        ("G1", 1, 1, "E", 4, False, False), ("G1", 1, 2, "S", 0, True, False),
        ("G1", 1, 3, "W", 4, False, False), ("G1", 1, 4, "N", 4, False, False),
        ("G1", 2, 1, "S", 3, False, False), ("G1", 2, 2, "W", 3, False, False),
        ("G1", 2, 3, "N", 4, False, False), ("G1", 2, 4, "E", 3, False, False),
        ("G1", 3, 1, "W", 3, False, False), ("G1", 3, 2, "N", 0, True, True),
        ("G1", 3, 3, "E", 3, False, False), ("G1", 3, 4, "S", 5, False, False),
        ("G1", 4, 1, "E", 4, False, False), ("G1", 4, 2, "N", 3, False, False),
        ("G1", 4, 3, "S", 4, False, False), ("G1", 4, 4, "W", 3, False, False),
        ("G2", 1, 1, "N", 4, False, False), ("G2", 1, 2, "E", 3, False, False),
        ("G2", 1, 3, "S", 0, True, False), ("G2", 1, 4, "W", 4, False, False),
        ("G3", 1, 1, "E", 7, False, True), ("G3", 1, 2, "S", 3, False, False), ("G3", 1, 3, "N", 4, False, False),
    ]
    con.executemany(
        "INSERT INTO bids (game_id, hand, bid_order, seat, bid, nil, blind, bid_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [b + (float(b[4]),) for b in bids],
    )
    plays, tricks, held = [], [], {s: [] for s in _ORDER}
    broken = False
    for t, (leader, cards, winner) in enumerate(G2_TRICKS, 1):
        seats = _seats_from(leader)
        for order, (seat, card) in enumerate(zip(seats, cards), 1):
            plays.append(("G2", 1, t, order, seat, card))
            held[seat].append(card)
        tricks.append(("G2", 1, t, leader, cards[0][1], winner, broken))
        broken = broken or any(c[1] == "S" for c in cards)
    con.executemany("INSERT INTO plays VALUES (?, ?, ?, ?, ?, ?)", plays)
    con.executemany(
        "INSERT INTO recorded_tricks VALUES (?, ?, ?, ?, NULL)", [(g, h, t, ld) for g, h, t, ld, *_ in tricks]
    )
    con.executemany("INSERT INTO tricks VALUES (?, ?, ?, ?, ?, ?, ?)", tricks)
    con.executemany(
        "INSERT INTO deals VALUES ('G2', 1, ?, ?, ?, TRUE)",
        [(seat, card, i) for seat in _ORDER for i, card in enumerate(held[seat], 1)],
    )
    recorded = [
        # game, hand, side, points, total, bags, taken, winner, score_before, bags_before
        ("G1", 1, "NS", -59, -39, 3, 5, None, 20, 2), ("G1", 1, "EW", 80, 110, 8, 8, None, 30, 8),
        ("G1", 2, "NS", -70, -109, 3, 6, None, None, None), ("G1", 2, "EW", 61, 175, 9, 7, None, None, None),
        ("G1", 3, "NS", 250, 141, 3, 5, None, None, None), ("G1", 3, "EW", -38, 137, 1, 8, None, None, None),
        ("G1", 4, "NS", 70, 211, 3, 7, "NS", None, None), ("G1", 4, "EW", -70, 67, 1, 6, "NS", None, None),
        ("G2", 1, "NS", None, None, None, None, None, None, None), ("G2", 1, "EW", None, None, None, None, None, None, None),
        ("G3", 1, "NS", None, None, None, 5, None, None, None), ("G3", 1, "EW", None, None, None, 8, None, None, None),
    ]
    con.executemany("INSERT INTO recorded_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", recorded)
    scores = [
        # game, hand, side, contract, tricks, made, bags_this_hand, bag_penalty, nil_points, points, total, bags
        ("G1", 1, "NS", 4, 5, True, 1, 0, -100, -59, -39, 3), ("G1", 1, "EW", 8, 8, True, 0, 0, 0, 80, 110, 8),
        ("G1", 2, "NS", 7, 6, False, 0, 0, 0, -70, -109, 3), ("G1", 2, "EW", 6, 7, True, 1, 0, 0, 61, 171, 9),
        ("G1", 3, "NS", 5, 5, True, 0, 0, 200, 250, 141, 3), ("G1", 3, "EW", 6, 8, True, 2, -100, 0, -38, 133, 1),
        ("G1", 4, "NS", 7, 7, True, 0, 0, 0, 70, 211, 3), ("G1", 4, "EW", 7, 6, False, 0, 0, 0, -70, 63, 1),
        ("G2", 1, "NS", 4, 4, True, 0, 0, 100, 140, 140, 0), ("G2", 1, "EW", 7, 9, True, 2, 0, 0, 72, 72, 2),
        ("G3", 1, "NS", 7, 5, False, 0, 0, 0, -70, -70, 0), ("G3", 1, "EW", 7, 8, True, 1, 0, 0, 141, 141, 1),
    ]
    con.executemany(
        "INSERT INTO hand_scores (game_id, hand, side, contract, tricks, made, bags_this_hand, bag_penalty, nil_points, "
        "points, total, bags, scoring) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'as_played')",
        scores,
    )
    con.executemany(
        "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            ("G1", G1_RULES, 4, 211, 63, "NS", 4),
            ("G2", "standard", 1, 140, 72, None, None),
            ("G3", "barmore", 1, -70, 141, None, None),
        ],
    )
    con.executemany(
        "INSERT INTO violations (game_id, hand, trick, seat, card, side, code, message, field, recorded, expected)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            ("G2", 1, 10, "N", "TH", "NS", "RENEGE", "N played TH on a diamond lead while holding TD", None, None, None),
            ("G1", 2, None, None, None, "EW", "SCORE_MISMATCH", "EW total: recorded 175, expected 171", "total", "175", "171"),
            ("G1", 4, None, "E", None, "EW", "BID_OUT_OF_TURN", "E bid before N (dealer W)", None, None, None),
        ],
    )
    return con


__all__ = ["build", "G2_TRICKS", "G1_RULES"]
