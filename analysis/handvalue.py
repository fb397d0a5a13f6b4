"""Every bid judged: what a seat's 13 cards are worth in tricks, and how likely a nil on them is to succeed.

Issue 14 item 3.  Three steps, each a public function:

1. **The count** (:func:`hand_features`): a fixed, documented count of the hand's trick-taking
   power, read with the deck of the game's ruleset (``get_ruleset(rules).deck``: jokers and nyc's 2D
   are trumps, a suit's "ace" is its highest card as it plays).  It is the count club players and
   card-playing bots (this project's simulator included, :func:`spadework.analysis.sim.bots.estimate_tricks`)
   make before they bid, written down in the weights of the common bidding guides (for example
   *Spades For Dummies*, "Figuring the value of your high cards in Spades": an ace is a trick, a king
   two thirds of one unless the ace is with it, a queen a third, side honours lose value in a suit of
   six or more; the top spades are tricks and every spade after the first three is one).  Four parts,
   in tricks:

   - ``side_honours`` (hearts, diamonds, clubs as they play): the suit's top card 1 (0.5 in a suit of
     six or more, where it is likely to be ruffed); the second card 1 with the top card, 2/3 guarded
     (two or more cards), 1/4 bare; the third card 1/2 with the top card, 1/3 with the second card or
     in a suit of three or more, else 0; in a suit of six or more the second card counts half and the
     third nothing.
   - ``trump_honours``: each of the hand's three highest trumps, ``g`` = the higher trumps it does not
     hold: 1 when ``g = 0`` (a boss trump), 1 when ``g`` is 1 or 2 and the hand holds at least ``g``
     trumps below it (a guarded king or queen of spades), 1/3 when ``g`` is 1 or 2 without that guard,
     else 0.
   - ``trump_length``: one trick for every trump after the first three.
   - ``ruffs``: the small trumps among the first three (those not counted a full trick) ruff side
     suits the hand is short in: a void can use two, a singleton one; each ruff counts 1/2 (the suit
     may not be led, partner may win the trick first).

   ``estimate`` is their sum.  Its parts are the features of the calibration.

2. **The calibration** (:func:`fit_tricks`): ``taken = b0 + b1 side_honours + b2 trump_honours +
   b3 trump_length + b4 ruffs``, a least-squares fit on the loaded hands (each seat that made a
   numeric bid and played the hand out; nil bidders are left out: they try to take nothing), with a
   ridge prior pulling the coefficients towards the count's own weights (b0 = 0, b1..b4 = 1) as
   strongly as :data:`PRIOR_HANDS` hands would, so a small database gets the count itself and a big
   one its own fit.  ``expected_tricks`` is the fitted value, kept within 0..13: the tricks an
   average player of this database takes with such a hand.  Being a straight line, it under-values
   hands far from the usual ones (13 trumps: about 10 on a club's season, not 13), so read a large
   ``bid_error`` on a freak hand with the hand beside it.  ``bid_error = bid - expected_tricks`` (above 0: the bid asked
   for more than the hand is worth; null for nil and blind bids, which are not a judgement of the hand).

3. **The nil model** (:func:`fit_nil`): ``P(nil made) = 1 / (1 + exp(-(a0 + a1 side_hcp + a2 trump_hcp
   + a3 trumps)))``, where ``side_hcp`` counts 4/3/2/1 for the four highest cards of each side suit
   (Milton Work points), ``trump_hcp`` the same for the deck's four highest trumps, and ``trumps`` the
   trumps held.  Fitted by maximum a posteriori logistic regression on every nil bid of the database
   (blind nils included: their hands were not chosen, which makes them honest evidence), with a
   normal prior centred on :data:`NIL_PRIOR` (a nil with no high card and three small spades makes
   it about 9 times in 10; each high side point costs about 0.2 on the logit scale, each trump point
   0.5, each spade 0.4) and standard deviations :data:`NIL_PRIOR_SD`: with few nils the prior
   decides, with hundreds the data do.  ``nil_chance`` is filled for every seat (what a nil on that
   hand would be worth), and judged for the seats that bid nil.

:func:`judge_bids` does all three on a database and writes ``hand_values`` (one row per seat of
each hand with a complete, valid deal) and ``hand_value_fit`` (the coefficients and the fit's
statistics, and the load generation they answer for), DDL in
:data:`spadework.parsers.schema.HAND_VALUE_TABLES`; a season is read a batch of games at a time.
:func:`ensure_hand_values` (the metrics call it) computes temporary ones, read-only too, when the
database has none or hands were loaded since they were written.

Units: tricks (0..13) for ``estimate``, ``expected_tricks``, ``bid_error``; probability 0..1 for
``nil_chance``.  RULES.md sections 2 (decks), 3 (bidding) and 5 (nil).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from spadework.analysis.engine.rules import STANDARD, Ruleset, RulesError, get_ruleset
from spadework.parsers.schema import HAND_VALUE_TABLES
from spadework.parsers.state import loaded_generation

TRICK_FEATURES: tuple[str, ...] = ("side_honours", "trump_honours", "trump_length", "ruffs")
"""The parts of the count, in tricks: the features of the trick calibration (:func:`fit_tricks`)."""

NIL_FEATURES: tuple[str, ...] = ("side_hcp", "trump_hcp", "trumps")
"""The features of the nil model (:func:`fit_nil`)."""

PRIOR_HANDS = 30.0
"""Strength of the calibration's prior (the count's own weights), in hands."""

NIL_PRIOR: dict[str, float] = {"intercept": 3.4, "side_hcp": -0.2, "trump_hcp": -0.5, "trumps": -0.4}
"""Prior means of the nil model's coefficients (logit scale): a nil with no high card and three small
spades makes it 9 times in 10, an average hand (8.5 side points, 1.5 trump points, 3.25 spades) 4 in
10, a strong one (12, 5, 4) 1 in 25."""

NIL_PRIOR_SD: dict[str, float] = {"intercept": 0.5, "side_hcp": 0.05, "trump_hcp": 0.12, "trumps": 0.12}
"""Prior standard deviations of the nil model's coefficients: on an average hand the prior is worth
about 15 to 20 nils, so a season's hundred nils move it and a handful barely do."""

NIL_SOUND = 0.5
"""A nil bid on a hand whose ``nil_chance`` is below this is called unsound (decision metrics)."""

MILTON_WORK = (4, 3, 2, 1)
"""High-card points of a suit's four highest cards."""


# --------------------------------------------------------------------------------------------
# The count


@dataclass(frozen=True, slots=True)
class HandFeatures:
    """The count of one hand (see the module doc).  Tricks for the first five, counts for the rest."""

    side_honours: float
    trump_honours: float
    trump_length: float
    ruffs: float
    trumps: int
    trump_hcp: int
    side_hcp: int

    @property
    def estimate(self) -> float:
        """The count in tricks: the sum of its four parts."""
        return self.side_honours + self.trump_honours + self.trump_length + self.ruffs


class _DeckView:
    """Per-deck tables: the suit each card plays as, its rank from the top of that suit (0 = top)."""

    __slots__ = ("suit", "rank", "cards", "side_suits")

    def __init__(self, ruleset: Ruleset) -> None:
        deck = ruleset.deck
        self.cards = frozenset(deck.cards)
        self.suit: dict[str, str] = {c: deck.suit(c) for c in deck.cards}
        order: dict[str, list[str]] = {}
        for c in sorted(deck.cards, key=deck.power, reverse=True):
            order.setdefault(self.suit[c], []).append(c)
        self.rank: dict[str, int] = {c: i for cards in order.values() for i, c in enumerate(cards)}
        self.side_suits: tuple[str, ...] = tuple(s for s in order if s != "S")


_VIEWS: dict[int, tuple[Ruleset, _DeckView]] = {}


def _view(ruleset: Ruleset) -> _DeckView:
    # keyed by identity: hashing a Ruleset walks all its options (get_ruleset caches the objects)
    hit = _VIEWS.get(id(ruleset))
    if hit is None or hit[0] is not ruleset:
        if len(_VIEWS) > 64:
            _VIEWS.clear()
        hit = _VIEWS[id(ruleset)] = (ruleset, _DeckView(ruleset))
    return hit[1]


def _side_suit_value(ranks: list[int]) -> float:
    """``side_honours`` of one side suit from the ranks held (0 = the suit's top card)."""
    n = len(ranks)
    held = set(ranks)
    long = n >= 6
    value = 0.0
    if 0 in held:
        value += 0.5 if long else 1.0
    if 1 in held:
        if 0 in held:
            v = 1.0
        elif n >= 2:
            v = 2 / 3
        else:
            v = 0.25
        value += v / 2 if long else v
    if 2 in held and not long:
        if 0 in held:
            value += 0.5
        elif 1 in held or n >= 3:
            value += 1 / 3
    return value


def hand_features(cards: Iterable[str], ruleset: Ruleset | Any = None) -> HandFeatures:
    """The count of a hand of card codes under ``ruleset`` (a :class:`Ruleset` or anything
    :func:`get_ruleset` reads; default ``standard``).  See the module doc for each part.

    Cards outside the ruleset's deck are ignored.  Raises :class:`RulesError` for bad rules and
    ``ValueError`` for ``cards`` given as one string (``"AS KS"``: pass a list) or naming a card twice.
    """
    if isinstance(cards, (str, bytes)):
        raise ValueError(f"cards must be a list of card codes such as {str(cards).split()[:3]}, not one string")
    cards = list(cards)
    if len(set(cards)) != len(cards):
        twice = sorted({c for c in cards if cards.count(c) > 1})
        raise ValueError(f"a hand holds each card once; {', '.join(twice)} is given twice")
    rs = ruleset if isinstance(ruleset, Ruleset) else get_ruleset(ruleset)
    view = _view(rs)
    suit, rank = view.suit, view.rank
    trump_ranks: list[int] = []
    side: dict[str, list[int]] = {}
    for c in cards:
        s = suit.get(c)
        if s is None:
            continue
        if s == "S":
            trump_ranks.append(rank[c])
        else:
            side.setdefault(s, []).append(rank[c])
    trump_ranks.sort()
    n_tr = len(trump_ranks)

    side_honours = sum(_side_suit_value(r) for r in side.values())
    side_hcp = sum(MILTON_WORK[r] for ranks in side.values() for r in ranks if r < 4)
    trump_hcp = sum(MILTON_WORK[r] for r in trump_ranks if r < 4)

    trump_honours = 0.0
    full = 0
    for i, p in enumerate(trump_ranks[:3]):
        g = p - i  # higher trumps the hand does not hold
        below = n_tr - i - 1
        if g <= 0 or (g <= 2 and below >= g):
            trump_honours += 1.0
            full += 1
        elif g <= 2:
            trump_honours += 1 / 3
    trump_length = float(max(0, n_tr - 3))

    spare = min(n_tr, 3) - full
    lengths = [len(side.get(s, ())) for s in view.side_suits]
    chances = sum(2 if n == 0 else 1 if n == 1 else 0 for n in lengths)
    ruffs = 0.5 * min(spare, chances)
    return HandFeatures(side_honours, trump_honours, trump_length, ruffs, n_tr, trump_hcp, side_hcp)


def estimate_tricks(cards: Iterable[str], ruleset: Ruleset | Any = None) -> float:
    """The count of a hand in tricks (:attr:`HandFeatures.estimate`)."""
    return hand_features(cards, ruleset).estimate


_RULES_TEXT: dict[Any, Ruleset] = {}


def ruleset_of(rules: Any) -> Ruleset:
    """The ruleset of a ``hands.rules`` value (preset name or JSON text); ``standard`` when unreadable
    (the checker reports bad rules as a finding; a hand value only needs the deck).  Never raises."""
    if isinstance(rules, (str, type(None))) and rules in _RULES_TEXT:
        return _RULES_TEXT[rules]
    try:
        rs = get_ruleset(rules)
    except (RulesError, ValueError, TypeError):
        rs = STANDARD
    if isinstance(rules, (str, type(None))) and len(_RULES_TEXT) < 256:
        _RULES_TEXT[rules] = rs
    return rs


# --------------------------------------------------------------------------------------------
# The fits


@dataclass(frozen=True)
class TrickFit:
    """The calibration of the count: ``expected = intercept + sum(coef[f] * feature f)``.

    ``n``: seat-hands fitted; ``r2``, ``mae`` (tricks): in-sample fit of the calibrated value;
    ``raw_r2``, ``raw_mae``: the plain count (``estimate``) used as the prediction, for comparison;
    ``cv_mae``: 5-fold cross-validated mean absolute error (``None`` below 50 hands);
    ``prior_hands``: strength of the ridge prior towards the count's weights.
    """

    intercept: float
    coef: dict[str, float]
    n: int
    r2: float | None
    mae: float | None
    raw_r2: float | None
    raw_mae: float | None
    cv_mae: float | None
    prior_hands: float = PRIOR_HANDS

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The fitted line for an ``(m, 4)`` array of :data:`TRICK_FEATURES` (tricks, unbounded)."""
        return self.intercept + x @ np.array([self.coef[f] for f in TRICK_FEATURES])

    def expected(self, x: np.ndarray) -> np.ndarray:
        """Expected tricks for an ``(m, 4)`` array of :data:`TRICK_FEATURES`: :meth:`predict` kept
        within 0..13 (a straight line leaves it for hands far from the database's usual ones)."""
        return np.clip(self.predict(x), 0.0, 13.0)

    def describe(self) -> str:
        """One line: the formula with its coefficients and the fit's numbers."""
        terms = " ".join(f"{self.coef[f]:+.3f} {f}" for f in TRICK_FEATURES)
        fit = f"n={self.n}"
        if self.r2 is not None:
            fit += f", R^2={self.r2:.3f}, MAE={self.mae:.3f}"
        if self.cv_mae is not None:
            fit += f", cross-validated MAE={self.cv_mae:.3f}"
        if self.raw_r2 is not None:
            fit += f"; the raw count: R^2={self.raw_r2:.3f}, MAE={self.raw_mae:.3f}"
        return f"expected_tricks = {self.intercept:.3f} {terms} ({fit})"


def _r2(y: np.ndarray, pred: np.ndarray) -> float | None:
    ss = float(((y - y.mean()) ** 2).sum())
    return None if ss == 0 else 1.0 - float(((y - pred) ** 2).sum()) / ss


def _ridge(x: np.ndarray, y: np.ndarray, prior: np.ndarray, strength: float) -> np.ndarray:
    """Least squares of ``y`` on ``[1, x]`` with a ridge penalty towards ``prior`` (intercept first).

    The penalty on each coefficient is ``strength`` times the feature's mean square (a floor of 0.25
    keeps it positive for a feature that never occurs), i.e. worth ``strength`` observations.
    """
    a = np.column_stack([np.ones(len(y)), x]) if len(y) else np.zeros((0, x.shape[1] + 1))
    scale = (a * a).mean(axis=0) if len(y) else np.ones(a.shape[1])
    lam = strength * np.maximum(scale, 0.25)
    lhs = a.T @ a + np.diag(lam)
    rhs = a.T @ y + lam * prior
    return np.linalg.solve(lhs, rhs)


_TRICK_PRIOR = np.array([0.0] + [1.0] * len(TRICK_FEATURES))


def fit_tricks(x: np.ndarray, y: np.ndarray, prior_hands: float = PRIOR_HANDS, folds: int = 5) -> TrickFit:
    """Calibrate the count: ``x`` an ``(n, 4)`` array of :data:`TRICK_FEATURES`, ``y`` the tricks taken.

    Returns a :class:`TrickFit`.  With no rows it is the count itself (intercept 0, weights 1).
    """
    x = np.asarray(x, dtype=float).reshape(-1, len(TRICK_FEATURES))
    y = np.asarray(y, dtype=float)
    beta = _ridge(x, y, _TRICK_PRIOR, prior_hands)
    coef = dict(zip(TRICK_FEATURES, (float(b) for b in beta[1:])))
    fit = TrickFit(float(beta[0]), coef, len(y), None, None, None, None, None, prior_hands)
    if len(y) == 0:
        return fit
    pred = fit.predict(x)
    raw = x.sum(axis=1)
    cv = None
    if len(y) >= 50:
        idx = np.arange(len(y)) % folds
        errors = np.empty(len(y))
        for k in range(folds):
            test = idx == k
            b = _ridge(x[~test], y[~test], _TRICK_PRIOR, prior_hands)
            errors[test] = np.abs(y[test] - (b[0] + x[test] @ b[1:]))
        cv = float(errors.mean())
    return TrickFit(
        fit.intercept, coef, len(y), _r2(y, pred), float(np.abs(y - pred).mean()),
        _r2(y, raw), float(np.abs(y - raw).mean()), cv, prior_hands,
    )  # fmt: skip


@dataclass(frozen=True)
class NilFit:
    """The nil model: ``P(made) = sigmoid(intercept + sum(coef[f] * feature f))``.

    ``n``: nils fitted, ``made``: how many were made; ``log_loss`` and ``brier`` of the fitted
    chances on them (``None`` without nils); ``base_log_loss``: the log loss of always answering the
    observed success rate (a model worth having beats it).
    """

    intercept: float
    coef: dict[str, float]
    n: int
    made: int
    log_loss: float | None
    brier: float | None
    base_log_loss: float | None

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Chance a nil succeeds for an ``(m, 3)`` array of :data:`NIL_FEATURES`."""
        z = self.intercept + x @ np.array([self.coef[f] for f in NIL_FEATURES])
        return 1.0 / (1.0 + np.exp(-z))

    def describe(self) -> str:
        """One line: the formula with its coefficients and the fit's numbers."""
        terms = " ".join(f"{self.coef[f]:+.3f} {f}" for f in NIL_FEATURES)
        fit = f"n={self.n} nils, {self.made} made"
        if self.log_loss is not None:
            fit += f", log loss {self.log_loss:.3f} (base rate {self.base_log_loss:.3f}), Brier {self.brier:.3f}"
        return f"logit P(nil made) = {self.intercept:.3f} {terms} ({fit})"


def fit_nil(
    x: np.ndarray,
    made: np.ndarray,
    prior: Mapping[str, float] = NIL_PRIOR,
    prior_sd: Mapping[str, float] = NIL_PRIOR_SD,
) -> NilFit:
    """Maximum a posteriori logistic regression of nil success on :data:`NIL_FEATURES`.

    ``x``: an ``(n, 3)`` array; ``made``: 1 where the nil was made.  The prior is normal, centred on
    ``prior`` with standard deviations ``prior_sd`` (keys ``intercept`` and the features); Newton's
    method from the prior mean.  With no nils the answer is the prior.
    """
    x = np.asarray(x, dtype=float).reshape(-1, len(NIL_FEATURES))
    t = np.asarray(made, dtype=float)
    names = ("intercept",) + NIL_FEATURES
    mu = np.array([prior[k] for k in names])
    prec = 1.0 / np.array([prior_sd[k] for k in names]) ** 2
    a = np.column_stack([np.ones(len(t)), x])
    beta = mu.copy()
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(a @ beta)))
        grad = a.T @ (t - p) - prec * (beta - mu)
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(prec)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.abs(step).max() < 1e-10:
            break
    coef = dict(zip(NIL_FEATURES, (float(b) for b in beta[1:])))
    fit = NilFit(float(beta[0]), coef, len(t), int(t.sum()), None, None, None)
    if len(t) == 0:
        return fit
    p = np.clip(fit.predict(x), 1e-9, 1 - 1e-9)
    rate = min(max(t.mean(), 1e-9), 1 - 1e-9)
    ll = float(-(t * np.log(p) + (1 - t) * np.log(1 - p)).mean())
    base = float(-(t * math.log(rate) + (1 - t) * math.log(1 - rate)).mean())
    return NilFit(fit.intercept, coef, len(t), int(t.sum()), ll, float(((p - t) ** 2).mean()), base)


# --------------------------------------------------------------------------------------------
# On a database

HAND_VALUE_COLUMNS: tuple[str, ...] = (
    "game_id", "hand", "seat", "player", "estimate", "expected_tricks", "bid", "bid_error",
    "nil", "blind", "taken", "nil_chance", *TRICK_FEATURES, *NIL_FEATURES,
)  # fmt: skip
"""Columns of ``hand_values``, in order (TABLES.md's list first)."""


def _seat_hands(con) -> Iterator[pl.DataFrame]:
    """One row per seat of each hand with a deal: its cards, the hand's rules, the seat's first bid and
    tricks taken (as the metrics count them: :mod:`spadework.analysis.metrics` ``sw_seat_hands``),
    a batch of games at a time (memory does not grow with the season)."""
    from spadework.analysis import metrics

    metrics.prepare(con)
    # the frozen per-player-hand copy when there is one (metrics.freeze), else a copy of the per-seat
    # view computed in batches of games
    src = metrics.CACHE_TABLE
    if not _exists(con, src):
        src = "sw_hv_seat_hands"
        metrics.materialize(con, src, "sw_seat_hands")
    try:
        for first, last in metrics._game_batches(con, metrics.BATCH_HANDS):
            yield _seat_hands_from(con, src, first, last)
    finally:
        if src == "sw_hv_seat_hands":
            con.execute(f"DROP TABLE IF EXISTS temp.main.{src}")


def _seat_hands_from(con, src: str, first: str, last: str) -> pl.DataFrame:
    return con.sql(
        f"""
        WITH d AS (
            SELECT game_id, hand, seat, list(card ORDER BY card_order) AS cards
            FROM deals WHERE game_id BETWEEN $first AND $last GROUP BY game_id, hand, seat
        )
        SELECT d.game_id, d.hand, d.seat, d.cards, h.rules,
               sh.player, sh.has_bid, sh.nil, sh.blind, sh.bid, sh.taken
        FROM d
        JOIN hands h ON h.game_id = d.game_id AND h.hand = d.hand
        LEFT JOIN (SELECT * FROM {src} WHERE game_id BETWEEN $first AND $last) sh
               ON sh.game_id = d.game_id AND sh.hand = d.hand AND sh.seat = d.seat
        ORDER BY d.game_id, d.hand, d.seat
        """,
        params={"first": first, "last": last},
    ).pl()


def _count(raw: pl.DataFrame) -> pl.DataFrame:
    """The count of every seat of a batch (:func:`hand_features`), the hands with an invalid deal left
    out; adds :data:`TRICK_FEATURES`, :data:`NIL_FEATURES`, ``estimate`` and ``valid_hand``."""
    parts: dict[str, list[Any]] = {f: [] for f in (*TRICK_FEATURES, *NIL_FEATURES, "known", "size")}
    for cards, rules in raw.select("cards", "rules").iter_rows():
        rs = ruleset_of(rules)
        f = hand_features(cards, rs)
        for name in (*TRICK_FEATURES, *NIL_FEATURES):
            parts[name].append(getattr(f, name))
        members = _view(rs).cards
        parts["known"].append(sum(1 for c in cards if c in members))
        parts["size"].append(len(rs.deck) // 4)
    feats = pl.DataFrame(
        parts,
        schema={**{f: pl.Float64 for f in TRICK_FEATURES}, **{f: pl.Int32 for f in NIL_FEATURES},
                "known": pl.Int32, "size": pl.Int32},
    )  # fmt: skip
    df = pl.concat([raw.drop("rules"), feats], how="horizontal")
    # a hand is valued when its four seats hold len(deck) / 4 cards of the deck each and no card twice
    key = ["game_id", "hand"]
    ok = df.group_by(key).agg(
        (
            (pl.len() == 4)
            & (pl.col("cards").list.len() == pl.col("size")).all()
            & (pl.col("known") == pl.col("size")).all()
            & (pl.col("cards").explode().n_unique() == pl.col("cards").list.len().sum())
        ).alias("valid_hand")
    )
    return df.join(ok, on=key, how="left").drop("cards", "known", "size")


@dataclass(frozen=True)
class Judgement:
    """What :func:`judge_bids` computed: the rows of ``hand_values`` (a polars frame with
    :data:`HAND_VALUE_COLUMNS`), the two fits, and how many hands were skipped for an incomplete or
    invalid deal."""

    values: pl.DataFrame
    tricks: TrickFit
    nil: NilFit
    hands: int
    skipped_hands: int
    notes: list[str] = field(default_factory=list)

    def fit_rows(self) -> list[tuple[str, str, float]]:
        """``hand_value_fit`` rows: ``(model, term, value)``."""
        t, n = self.tricks, self.nil
        rows: list[tuple[str, str, float | None]] = [("tricks", "intercept", t.intercept)]
        rows += [("tricks", f, t.coef[f]) for f in TRICK_FEATURES]
        rows += [("tricks", "n", t.n), ("tricks", "r2", t.r2), ("tricks", "mae", t.mae),
                 ("tricks", "cv_mae", t.cv_mae), ("tricks", "raw_r2", t.raw_r2), ("tricks", "raw_mae", t.raw_mae),
                 ("tricks", "prior_hands", t.prior_hands)]  # fmt: skip
        rows += [("nil", "intercept", n.intercept)] + [("nil", f, n.coef[f]) for f in NIL_FEATURES]
        rows += [("nil", "n", n.n), ("nil", "made", n.made), ("nil", "log_loss", n.log_loss),
                 ("nil", "base_log_loss", n.base_log_loss), ("nil", "brier", n.brier),
                 ("nil", "sound_threshold", NIL_SOUND)]  # fmt: skip
        return [(m, k, float(v)) for m, k, v in rows if v is not None]


def compute(con, prior_hands: float = PRIOR_HANDS) -> Judgement:
    """Value every seat's hand in a database and fit both models; writes nothing.

    ``con``: a DuckDB connection with the TABLES.md tables (read-only is fine; the checker's ``tricks``
    make tricks taken exact, else ``hands.taken_*`` or the replayed plays count).  A hand is valued
    when its deal gives every seat ``len(deck) / 4`` distinct cards of the ruleset's deck and no card
    twice; other hands are skipped and counted.  Returns a :class:`Judgement`.
    """
    counted = [_count(raw) for raw in _seat_hands(con) if raw.height]
    df = pl.concat(counted) if counted else None
    if df is None:
        empty = {"game_id": [], "hand": [], "seat": [], "cards": [], "rules": [], "player": [], "has_bid": [],
                 "nil": [], "blind": [], "bid": [], "taken": []}  # fmt: skip
        df = _count(pl.DataFrame(empty, schema={
            "game_id": pl.String, "hand": pl.Int32, "seat": pl.String, "cards": pl.List(pl.String),
            "rules": pl.String, "player": pl.String, "has_bid": pl.Boolean, "nil": pl.Boolean,
            "blind": pl.Boolean, "bid": pl.Int32, "taken": pl.Int32}))  # fmt: skip
    ok = df.select("game_id", "hand", "valid_hand").unique()
    hands = ok.height
    skipped = int((~ok["valid_hand"]).sum())
    df = (
        df.filter(pl.col("valid_hand"))
        .with_columns(
            bid=pl.when(pl.col("has_bid")).then(pl.col("bid")).cast(pl.Int32),
            nil=pl.when(pl.col("has_bid")).then(pl.col("nil")),
            blind=pl.when(pl.col("has_bid")).then(pl.col("blind")),
            taken=pl.col("taken").cast(pl.Int32),
            hand=pl.col("hand").cast(pl.Int32),
            estimate=pl.sum_horizontal(*TRICK_FEATURES),
        )
        .sort("game_id", "hand", "seat")
    )
    numeric = pl.col("bid").is_not_null() & ~pl.col("nil") & ~pl.col("blind")
    train = df.filter(numeric & pl.col("taken").is_not_null())
    tricks = fit_tricks(train.select(TRICK_FEATURES).to_numpy(), train["taken"].to_numpy(), prior_hands)
    nils = df.filter(pl.col("nil").fill_null(False) & pl.col("taken").is_not_null())
    nil = fit_nil(nils.select(NIL_FEATURES).to_numpy(), (nils["taken"] == 0).to_numpy())
    if len(df):
        df = df.with_columns(
            expected_tricks=pl.Series(tricks.expected(df.select(TRICK_FEATURES).to_numpy())),
            nil_chance=pl.Series(nil.predict(df.select(NIL_FEATURES).to_numpy())),
        )
    else:
        df = df.with_columns(expected_tricks=pl.lit(None, pl.Float64), nil_chance=pl.lit(None, pl.Float64))
    df = df.with_columns(
        bid_error=pl.when(numeric).then(pl.col("bid") - pl.col("expected_tricks")).otherwise(None)
    ).select(HAND_VALUE_COLUMNS)
    notes = []
    if skipped:
        notes.append(f"{skipped} of {hands} hands with a deal skipped: incomplete or invalid deal")
    return Judgement(df, tricks, nil, hands, skipped, notes)


def _qualified(con, name: str, temp: bool) -> str:
    """``name`` in the temporary schema or in the database itself (a temporary copy may shadow it)."""
    if temp:
        return f"temp.main.{name}"
    return f'"{con.execute("SELECT current_database()").fetchall()[0][0]}".main.{name}'


def _write(con, result: Judgement, temp: bool) -> None:
    kind = "TEMP TABLE" if temp else "TABLE"
    values = _qualified(con, "hand_values", temp)
    fit = _qualified(con, "hand_value_fit", temp)
    for name, ddl in HAND_VALUE_TABLES.items():
        con.execute(f"CREATE OR REPLACE {kind} {_qualified(con, name, temp)} ({ddl})")
    frame = result.values  # noqa: F841 (read by DuckDB below)
    cols = ", ".join(HAND_VALUE_COLUMNS)
    con.execute(f"INSERT INTO {values} ({cols}) SELECT {cols} FROM frame")
    rows = result.fit_rows() + [("data", "loaded_generation", float(loaded_generation(con))),
                                ("data", "hands", float(result.hands)),
                                ("data", "skipped_hands", float(result.skipped_hands))]  # fmt: skip
    con.executemany(f"INSERT INTO {fit} VALUES (?, ?, ?)", rows)


def judge_bids(con, prior_hands: float = PRIOR_HANDS) -> Judgement:
    """Value every hand of a database and REPLACE its ``hand_values`` and ``hand_value_fit`` tables.

    ``hand_values``: one row per seat of each valued hand (:data:`HAND_VALUE_COLUMNS`; see the module
    doc for each); ``hand_value_fit``: ``(model, term, value)`` rows, model ``tricks`` or ``nil``, terms
    the coefficients and ``n``, ``r2``, ``mae``, ``cv_mae``, ``raw_r2``, ``raw_mae``, ``made``,
    ``log_loss``, ``base_log_loss``, ``brier``.  Rerun after loading more hands.  Needs a writable
    connection (duckdb raises otherwise).  Returns the :class:`Judgement`.
    """
    result = compute(con, prior_hands)
    con.execute("BEGIN TRANSACTION")
    try:
        _write(con, result, temp=False)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return result


def _exists(con, name: str) -> bool:
    rows = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND NOT internal", [name]).fetchall()
    return bool(rows[0][0])


def _where(con, name: str) -> set[str]:
    """``{"temp", "db"}``: whether ``name`` exists as a temporary table and in the database itself."""
    rows = con.execute(
        "SELECT DISTINCT CASE WHEN database_name = 'temp' THEN 'temp' ELSE 'db' END FROM duckdb_tables() "
        "WHERE table_name = ? AND (database_name = 'temp' OR database_name = current_database())",
        [name],
    ).fetchall()
    return {r[0] for r in rows}


def _stored_generation(con) -> int | None:
    """The load generation the database's own ``hand_value_fit`` was computed for (``None``: unknown)."""
    rows = con.execute(
        f"SELECT value FROM {_qualified(con, 'hand_value_fit', False)} WHERE model = 'data' AND term = 'loaded_generation'"
    ).fetchall()
    return int(rows[0][0]) if rows else None


def ensure_hand_values(con) -> None:
    """Make sure ``hand_values`` and ``hand_value_fit`` can be queried and answer for what is loaded.

    The database's own tables (``spadework judge-bids``) are used when they were computed for the
    current load (:func:`spadework.parsers.state.loaded_generation`); when the database has none, or
    hands were loaded since, fresh ones are computed into temporary tables that shadow them for this
    connection (works read-only; the database file is not changed)."""
    tables = ("hand_values", "hand_value_fit")
    where = {t: _where(con, t) for t in tables}
    if all("db" in w for w in where.values()) and _stored_generation(con) == loaded_generation(con):
        for t in tables:
            if "temp" in where[t]:
                con.execute(f"DROP TABLE temp.main.{t}")
        return
    if all("temp" in w for w in where.values()):
        return  # computed earlier on this connection
    _write(con, compute(con), temp=True)


def fits(con) -> tuple[TrickFit, NilFit]:
    """The two fits of the database (``hand_value_fit``, computed first if needed) as objects; their
    ``describe()`` gives the formula and the fit's numbers in one line each."""
    ensure_hand_values(con)
    v = {(m, t): val for m, t, val in con.execute("SELECT model, term, value FROM hand_value_fit").fetchall()}
    t = lambda k: v.get(("tricks", k))  # noqa: E731
    n = lambda k: v.get(("nil", k))  # noqa: E731
    trick = TrickFit(
        t("intercept") or 0.0, {f: t(f) for f in TRICK_FEATURES}, int(t("n") or 0), t("r2"), t("mae"), t("raw_r2"),
        t("raw_mae"), t("cv_mae"), t("prior_hands") or PRIOR_HANDS,
    )  # fmt: skip
    nil = NilFit(n("intercept") or 0.0, {f: n(f) for f in NIL_FEATURES}, int(n("n") or 0), int(n("made") or 0),
                 n("log_loss"), n("brier"), n("base_log_loss"))  # fmt: skip
    return trick, nil


def fit_summary(con) -> str:
    """Two lines for a reader: the trick calibration and the nil model with their fits (:func:`fits`)."""
    trick, nil = fits(con)
    return f"Hand value: {trick.describe()}\nNil model: {nil.describe()}"


def fit_table(con) -> pl.DataFrame:
    """``hand_value_fit`` as a frame (``model, term, value``), computing it first if needed."""
    ensure_hand_values(con)
    return con.sql("SELECT model, term, value FROM hand_value_fit ORDER BY model DESC, rowid").pl()


__all__ = [
    "HAND_VALUE_COLUMNS",
    "HandFeatures",
    "Judgement",
    "MILTON_WORK",
    "NIL_FEATURES",
    "NIL_PRIOR",
    "NIL_PRIOR_SD",
    "NIL_SOUND",
    "NilFit",
    "PRIOR_HANDS",
    "TRICK_FEATURES",
    "TrickFit",
    "compute",
    "ensure_hand_values",
    "estimate_tricks",
    "fit_nil",
    "fit_summary",
    "fit_table",
    "fit_tricks",
    "fits",
    "hand_features",
    "judge_bids",
    "ruleset_of",
]
