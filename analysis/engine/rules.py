"""Rulesets as data: presets and named options (RULES.md sections 2, 3 and 5).

A :class:`Ruleset` is a frozen value holding every option of the RULES.md
section 5 options table under the same key, plus the deck keys
(``removed_cards``, ``extra_cards``, ``trump_order``: RULES.md section 2, "A
ruleset may list its own removed cards, extra cards and trump order") and two
keys of our own: ``max_side_bid`` (partners' bids may total at most N;
OpenSpiel uses 13) and ``dealer`` (a seat that deals every hand, as in
OpenSpiel's one-hand episodes; ``None`` = the deal rotates).

Presets: ``standard``, ``barmore``, ``nyc`` (RULES.md section 2) and
``openspiel`` (DeepMind OpenSpiel's ``spades`` game: no blind nil, partners'
bids at most 13, dealer W so N bids and leads first; docs/RULES_NOTES.md).

:func:`get_ruleset` reads what a log's ``rules`` key or the CLI holds;
:func:`ruleset_name` gives the stable text stored in ``games.rules``.
Both raise :class:`RulesError` (a ``ValueError``) naming the allowed presets,
keys or values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from spadework.parsers.cards import JOKER_DECK, NYC_DECK, STANDARD_DECK, CardError, Deck, make_deck, parse_card
from spadework.parsers.seats import Seat


class RulesError(ValueError):
    """A ruleset that cannot be built: unknown preset, unknown option key or a bad value.

    The message names what is allowed, e.g. ``unknown rules option 'bagz'
    (known: target, nil, ...)``.
    """


FAILED_NIL_TRICKS = ("side", "bags_only", "ignored")
FIRST_LEADS = ("left_of_dealer", "two_of_clubs")
BLIND_NIL_MODES = ("never", "always")

_DEFAULT_BLIND_NIL: dict[str, int] = {"behind_by": 100}


def _freeze(value: Any) -> Any:
    """A hashable, canonical copy of a JSON-like value (dicts become sorted item tuples)."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True, eq=False)
class Ruleset:
    """One ruleset: a preset name and the value of every option.

    Options (RULES.md section 5; ``standard`` values are the defaults):

    - ``target`` (points that end the game, 500), ``losing_score`` (mercy: a side at
      or below it loses; ``None``).
    - ``nil`` (nil allowed), ``nil_points`` (100), ``blind_nil_points`` (200),
      ``blind_nil``: ``"never"``, ``"always"`` or ``{"behind_by": N}`` (100).
    - ``blind_bids``: ``None`` or ``{"values": [7], "points": 140}``; optional keys
      ``"behind_by": N`` (only a side behind by N points may bid blind) and
      ``"partner_bids"`` (``False`` by default: the partner of a blind bidder makes no
      bid, as in Barmore's blind seven).  Without ``"points"`` a blind bid of v scores
      +/-20 x v.
    - ``min_side_bid`` / ``max_side_bid``: smallest / largest contract the partners'
      numeric bids may total (``None`` = no limit; a side with a nil is exempt from the
      minimum).
    - ``failed_nil_tricks``: ``"side"``, ``"bags_only"``, ``"ignored"``.
    - ``bag_limit`` (10; 0 = no penalty), ``bag_penalty`` (100), ``bag_points`` (1).
    - ``ten_for_two_hundred`` (False).
    - ``first_lead``: ``"left_of_dealer"`` or ``"two_of_clubs"`` (the 2C holder leads
      trick 1 and must lead the 2C).
    - ``spades_lead_any_time`` (False): no broken rule for leads from trick 2 on.
    - ``renege_penalty_tricks`` (0): tricks moved per renege from the offending side.
    - ``removed_cards``, ``extra_cards``, ``trump_order`` (high to low; ``None`` =
      extra jokers then AS..2S): the deck.
    - ``dealer``: ``None`` (the deal rotates) or a seat letter that deals every hand.

    Derived, read-only: ``deck`` (a :class:`~spadework.parsers.cards.Deck`), ``suits`` (card code ->
    the suit it plays as, ``"S"`` for every trump) and ``powers`` (card code -> its order within
    that suit), both covering all 54 codes, for the replay's hot loop.

    Equality and hashing go by the option values (``preset`` included).
    Build one with :func:`get_ruleset`; ``dataclasses.replace`` skips validation.
    """

    preset: str = "standard"
    target: int = 500
    nil: bool = True
    nil_points: int = 100
    blind_nil_points: int = 200
    blind_nil: str | dict[str, int] = field(default_factory=lambda: dict(_DEFAULT_BLIND_NIL))
    blind_bids: dict[str, Any] | None = None
    min_side_bid: int | None = None
    max_side_bid: int | None = None
    failed_nil_tricks: str = "side"
    bag_limit: int = 10
    bag_penalty: int = 100
    bag_points: int = 1
    ten_for_two_hundred: bool = False
    losing_score: int | None = None
    first_lead: str = "left_of_dealer"
    spades_lead_any_time: bool = False
    renege_penalty_tricks: int = 0
    removed_cards: tuple[str, ...] = ()
    extra_cards: tuple[str, ...] = ()
    trump_order: tuple[str, ...] | None = None
    dealer: str | None = None

    deck: Deck = field(init=False, repr=False, compare=False)
    # per-card lookup tables for the replay's hot loop (built once per ruleset)
    suits: dict[str, str] = field(init=False, repr=False, compare=False)
    powers: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        deck = _deck_for(self.removed_cards, self.extra_cards, self.trump_order, self.preset)
        object.__setattr__(self, "deck", deck)
        suits = {c: deck.suit(c) for c in _ALL_CARDS}
        powers = {c: deck.power(c) for c in _ALL_CARDS}
        object.__setattr__(self, "suits", suits)
        object.__setattr__(self, "powers", powers)

    # --- identity ---------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """Every option as a JSON-ready dict (``preset`` first), the form a log's ``rules`` holds."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if not f.init:
                continue
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    def _key(self) -> tuple:
        return _freeze(self.options())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ruleset):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def name(self) -> str:
        """The stable text of :func:`ruleset_name` (``"standard"``, ``"standard {...}"``)."""
        return ruleset_name(self)

    # --- questions the replay and the scorer ask ---------------------------------------------

    @property
    def fixed_dealer(self) -> Seat | None:
        """The seat that deals every hand, or ``None`` when the deal rotates."""
        return None if self.dealer is None else Seat.parse(self.dealer)

    def blind_nil_allowed(self, own_total: int, other_total: int) -> bool | None:
        """Whether a side with ``own_total`` against ``other_total`` may bid blind nil.

        ``None`` when the ruleset has no blind nil at all (``nil`` false or
        ``blind_nil`` ``"never"``): that is ``BID_INVALID``, not ``BLIND_BID_NOT_ALLOWED``.
        """
        if not self.nil or self.blind_nil == "never":
            return None
        if self.blind_nil == "always":
            return True
        return other_total - own_total >= self.blind_nil["behind_by"]  # type: ignore[index]

    def blind_bid_known(self, value: Any) -> bool:
        """True when ``value`` is one of the blind numeric bids the ruleset has."""
        return self.blind_bids is not None and value in self.blind_bids["values"]

    def blind_bid_score_allowed(self, own_total: int, other_total: int) -> bool:
        """The score condition of blind numeric bids (``blind_bids.behind_by``), true when none."""
        if self.blind_bids is None:
            return False
        n = self.blind_bids.get("behind_by")
        return n is None or other_total - own_total >= n

    @property
    def blind_partner_bids(self) -> bool:
        """Whether the partner of a blind numeric bidder still bids (``False`` in Barmore)."""
        return bool(self.blind_bids and self.blind_bids.get("partner_bids", False))

    def blind_bid_points(self, value: int | float) -> int | float:
        """Points for making a blind numeric bid of ``value`` that the ruleset has (lost when set):
        ``blind_bids.points``, or 20 x ``value`` when the ruleset gives none.  A blind bid the ruleset
        does not have (:meth:`blind_bid_known` false) is scored as the plain bid, 10 x ``value``."""
        if not self.blind_bid_known(value):
            return 10 * value
        if "points" in self.blind_bids:  # type: ignore[operator]
            return self.blind_bids["points"]  # type: ignore[index]
        return 20 * value


_ALL_CARDS: tuple[str, ...] = STANDARD_DECK.cards + ("BJ", "LJ")
_KNOWN_DECKS = (STANDARD_DECK, JOKER_DECK, NYC_DECK)


def _deck_for(removed: tuple[str, ...], extra: tuple[str, ...], trump: tuple[str, ...] | None, name: str) -> Deck:
    deck = make_deck(name, removed, extra, trump)
    for known in _KNOWN_DECKS:
        if known.cards == deck.cards and known.trump_order == deck.trump_order:
            return known
    return deck


# --- option validation --------------------------------------------------------------------------

_FIELDS = [f for f in dataclasses.fields(Ruleset) if f.init and f.name != "preset"]
OPTION_KEYS: tuple[str, ...] = tuple(f.name for f in _FIELDS)
"""Every option key a log's ``rules`` object or the CLI may set (``preset`` aside)."""


def _bad(key: str, value: Any, wanted: str) -> RulesError:
    return RulesError(f"rules option '{key}': {value!r} is not {wanted}")


def _as_int(key: str, value: Any, minimum: int | None = None) -> int:
    if isinstance(value, str):
        t = value.strip()
        try:
            value = int(t)
        except ValueError:
            raise _bad(key, value, "a whole number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
        isinstance(value, float) and not value.is_integer()
    ):
        raise _bad(key, value, "a whole number")
    value = int(value)
    if minimum is not None and value < minimum:
        raise _bad(key, value, f"a whole number of at least {minimum}")
    if not -OPTION_INT_LIMIT < value < OPTION_INT_LIMIT:  # so a game's points stay far inside BIGINT
        raise _bad(key, value, f"a whole number between {-OPTION_INT_LIMIT} and {OPTION_INT_LIMIT} (exclusive)")
    return value


OPTION_INT_LIMIT = 10**9
"""Whole-number rule options stay below this in size, so points and totals (BIGINT columns) never
overflow however long a game runs."""


def _as_opt_int(key: str, value: Any, minimum: int | None = None) -> int | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null", "")):
        return None
    return _as_int(key, value, minimum)


def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise _bad(key, value, "true or false")


def _as_choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    if isinstance(value, str) and value.strip() in choices:
        return value.strip()
    raise _bad(key, value, "one of " + ", ".join(repr(c) for c in choices))


def _as_cards(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, (list, tuple)):
        raise _bad(key, value, "a list of cards")
    try:
        return tuple(parse_card(c) for c in value)
    except CardError as exc:
        raise RulesError(f"rules option '{key}': {exc}") from None


def _as_blind_nil(value: Any) -> str | dict[str, int]:
    if isinstance(value, str) and value.strip() in BLIND_NIL_MODES:
        return value.strip()
    if isinstance(value, Mapping) and set(value) == {"behind_by"}:
        return {"behind_by": _as_int("blind_nil.behind_by", value["behind_by"], 0)}
    raise _bad("blind_nil", value, "'never', 'always' or {\"behind_by\": N}")


_BLIND_BID_KEYS = ("values", "points", "behind_by", "partner_bids")


def _as_blind_bids(value: Any) -> dict[str, Any] | None:
    if value is None or value is False:
        return None
    if not isinstance(value, Mapping) or "values" not in value:
        raise _bad("blind_bids", value, 'null or an object like {"values": [7], "points": 140}')
    unknown = [k for k in value if k not in _BLIND_BID_KEYS]
    if unknown:
        raise RulesError(
            f"rules option 'blind_bids': unknown key '{unknown[0]}' (known: {', '.join(_BLIND_BID_KEYS)})"
        )
    vals = value["values"]
    if not isinstance(vals, (list, tuple)) or not vals:
        raise _bad("blind_bids.values", vals, "a non-empty list of bids 1..13")
    values = sorted({_as_int("blind_bids.values", v, 1) for v in vals})
    if values[-1] > 13:
        raise _bad("blind_bids.values", vals, "a non-empty list of bids 1..13")
    out: dict[str, Any] = {"values": values}
    if value.get("points") is not None:
        out["points"] = _as_int("blind_bids.points", value["points"])
    if value.get("behind_by") is not None:
        out["behind_by"] = _as_int("blind_bids.behind_by", value["behind_by"], 0)
    if value.get("partner_bids") is not None:
        out["partner_bids"] = _as_bool("blind_bids.partner_bids", value["partner_bids"])
    return out


def _as_dealer(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return str(Seat.parse(value))
    except ValueError:
        raise _bad("dealer", value, "null or a seat (N, E, S, W)") from None


_VALIDATORS: dict[str, Any] = {
    "target": lambda v: _as_int("target", v, 1),
    "nil": lambda v: _as_bool("nil", v),
    "nil_points": lambda v: _as_int("nil_points", v, 0),
    "blind_nil_points": lambda v: _as_int("blind_nil_points", v, 0),
    "blind_nil": _as_blind_nil,
    "blind_bids": _as_blind_bids,
    "min_side_bid": lambda v: _as_opt_int("min_side_bid", v, 0),
    "max_side_bid": lambda v: _as_opt_int("max_side_bid", v, 0),
    "failed_nil_tricks": lambda v: _as_choice("failed_nil_tricks", v, FAILED_NIL_TRICKS),
    "bag_limit": lambda v: _as_int("bag_limit", v, 0),
    "bag_penalty": lambda v: _as_int("bag_penalty", v),
    "bag_points": lambda v: _as_int("bag_points", v),
    "ten_for_two_hundred": lambda v: _as_bool("ten_for_two_hundred", v),
    "losing_score": lambda v: _as_opt_int("losing_score", v),
    "first_lead": lambda v: _as_choice("first_lead", v, FIRST_LEADS),
    "spades_lead_any_time": lambda v: _as_bool("spades_lead_any_time", v),
    "renege_penalty_tricks": lambda v: _as_int("renege_penalty_tricks", v, 0),
    "removed_cards": lambda v: _as_cards("removed_cards", v),
    "extra_cards": lambda v: _as_cards("extra_cards", v),
    "trump_order": lambda v: None if v is None else _as_cards("trump_order", v),
    "dealer": _as_dealer,
}
assert set(_VALIDATORS) == set(OPTION_KEYS), "every option needs a validator"

# --- presets ------------------------------------------------------------------------------------

PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "standard": {},
    "barmore": {
        "nil": False,
        "blind_nil": "never",
        "blind_bids": {"values": [7], "points": 140},
        "removed_cards": ["2C", "2H"],
        "extra_cards": ["BJ", "LJ"],
        "trump_order": list(JOKER_DECK.trump_order),
    },
    "nyc": {
        "removed_cards": ["2C", "2H"],
        "extra_cards": ["BJ", "LJ"],
        "trump_order": list(NYC_DECK.trump_order),
    },
    "openspiel": {
        "blind_nil": "never",
        "failed_nil_tricks": "side",
        "max_side_bid": 13,
        "dealer": "W",
    },
}
"""Each preset as the options it changes from ``standard``."""

PRESETS: tuple[str, ...] = tuple(PRESET_OPTIONS)


def _build(preset: str, options: Mapping[str, Any]) -> Ruleset:
    values: dict[str, Any] = {}
    for key, raw in {**PRESET_OPTIONS[preset], **options}.items():
        if key not in _VALIDATORS:
            raise RulesError(f"unknown rules option '{key}' (known: preset, {', '.join(OPTION_KEYS)})")
        values[key] = _VALIDATORS[key](raw)
    try:
        rs = Ruleset(preset=preset, **values)
    except CardError as exc:
        raise RulesError(f"rules: {exc}") from None
    _check_consistent(rs)
    return rs


def _check_consistent(rs: Ruleset) -> None:
    n = len(rs.deck)
    if n != 52:
        raise RulesError(
            f"rules: the deck has {n} cards (removed {list(rs.removed_cards)}, extra {list(rs.extra_cards)}); "
            "four seats of 13 need 52"
        )
    outside = [c for c in rs.deck.trump_order if c not in rs.deck]
    if outside:
        raise RulesError(f"rules option 'trump_order': {', '.join(outside)} not in the deck")
    if rs.min_side_bid is not None and rs.max_side_bid is not None and rs.min_side_bid > rs.max_side_bid:
        raise RulesError(f"rules: min_side_bid {rs.min_side_bid} is above max_side_bid {rs.max_side_bid}")


_CACHE: dict[Any, Ruleset] = {}


def _json_object(text: str, problem: str) -> dict[str, Any]:
    """``text`` read as a JSON object; :class:`RulesError` ``problem`` otherwise."""
    try:
        opts = orjson.loads(text)
    except orjson.JSONDecodeError:
        opts = None
    if not isinstance(opts, dict):
        raise RulesError(problem)
    return opts


def _parse_name_text(text: str) -> tuple[str, dict[str, Any]]:
    """``"standard"`` or ``"standard {json}"`` (the form :func:`ruleset_name` writes)."""
    t = text.strip()
    if t.startswith("{"):  # a JSON object, however it is spaced ('{"preset": "nyc"}')
        opts = _json_object(t, f"rules {text!r} is neither a preset name nor a JSON object")
        return str(opts.pop("preset", "standard")).lower(), opts
    if " " in t and t.endswith("}"):
        head, _, tail = t.partition(" ")
        opts = _json_object(tail, f"rules {text!r}: the options after the preset name must be a JSON object")
        return head.lower(), opts
    return t.lower(), {}


def get_ruleset(spec: Any = None, overrides: Mapping[str, Any] | None = None) -> Ruleset:
    """The ruleset a log's ``rules`` value or the CLI's ``--rules`` names.

    ``spec`` is ``None`` (``standard``), a preset name (``"barmore"``), the text
    :func:`ruleset_name` writes (``"standard {\"target\":300}"``), a dict
    ``{"preset": "standard", **options}`` (``preset`` defaults to ``standard``), or a
    :class:`Ruleset`.  ``overrides`` are options applied on top (they win).

    Raises :class:`RulesError` for an unknown preset (naming the presets), an
    unknown option key (naming the keys) or a bad value (``target "abc"``).
    """
    if isinstance(spec, Ruleset):
        if not overrides:
            return spec
        base = spec.options()
        preset = base.pop("preset")
        return get_ruleset({"preset": preset, **base}, overrides)
    if spec is None:
        preset, options = "standard", {}
    elif isinstance(spec, str):
        preset, options = _parse_name_text(spec)
    elif isinstance(spec, Mapping):
        options = dict(spec)
        preset = options.pop("preset", "standard")
        if not isinstance(preset, str):
            raise RulesError(f"rules preset {preset!r} is not a name (known presets: {', '.join(PRESETS)})")
        preset = preset.strip().lower()
    else:
        raise RulesError(f"rules must be a preset name or an object, not {spec!r}")
    if preset not in PRESET_OPTIONS:
        raise RulesError(f"unknown rules preset {preset!r} (known presets: {', '.join(PRESETS)})")
    if overrides:
        options = {**options, **dict(overrides)}
    try:
        key = (preset, _freeze(options))
        hash(key)
    except TypeError:
        key = None
    if key is not None:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
    rs = _build(preset, options)
    if key is not None and len(_CACHE) < 1024:
        _CACHE[key] = rs
    return rs


def changed_options(rs: Ruleset) -> dict[str, Any]:
    """The options of ``rs`` that differ from its preset, JSON-ready, keys sorted."""
    base = get_ruleset(rs.preset).options()
    mine = rs.options()
    return {k: mine[k] for k in sorted(mine) if k != "preset" and _freeze(mine[k]) != _freeze(base[k])}


def ruleset_name(spec: Any) -> str:
    """Stable text for the ``games.rules`` column: the preset name, or the preset name,
    a space and the canonical JSON (sorted keys, no spaces) of the options that differ
    from the preset, e.g. ``standard {"target":300}``.

    Accepts anything :func:`get_ruleset` does; ``get_ruleset(ruleset_name(x)) == get_ruleset(x)``.
    Raises :class:`RulesError` like :func:`get_ruleset`.
    """
    rs = spec if isinstance(spec, Ruleset) else get_ruleset(spec)
    diff = changed_options(rs)
    if not diff:
        return rs.preset
    return rs.preset + " " + orjson.dumps(diff, option=orjson.OPT_SORT_KEYS).decode()


def rules_key(spec: Any) -> tuple[str, Ruleset | None]:
    """``(ruleset_name(spec), ruleset)`` of a log's ``rules`` value, or ``("unreadable <spec>", None)``
    when it is not a ruleset (the checker then reports it and checks the game under
    :func:`fallback_ruleset`)."""
    try:
        rs = get_ruleset(spec)
        return ruleset_name(rs), rs
    except RulesError:
        return f"unreadable {spec!r}", None


STANDARD = get_ruleset("standard")
BARMORE = get_ruleset("barmore")
NYC = get_ruleset("nyc")
OPENSPIEL = get_ruleset("openspiel")


def fallback_ruleset(spec: Any) -> Ruleset:
    """The ruleset a game whose ``rules`` cannot be read is checked under (RULES_INVALID): the
    preset they name where that much can be read (``{"preset": "nyc", "targte": 300}`` -> ``nyc``,
    its deck included, so its jokers are not all ``DEAL_INVALID``), else ``standard``.  Never raises."""
    try:
        if isinstance(spec, str):
            preset: Any = _parse_name_text(spec)[0]
        elif isinstance(spec, Mapping):
            preset = spec.get("preset", "standard")
        else:
            return STANDARD
        return get_ruleset(preset.strip().lower()) if isinstance(preset, str) else STANDARD
    except RulesError:
        return STANDARD

__all__ = [
    "BARMORE",
    "FAILED_NIL_TRICKS",
    "FIRST_LEADS",
    "NYC",
    "OPENSPIEL",
    "OPTION_KEYS",
    "PRESETS",
    "PRESET_OPTIONS",
    "Ruleset",
    "RulesError",
    "STANDARD",
    "fallback_ruleset",
    "changed_options",
    "get_ruleset",
    "rules_key",
    "ruleset_name",
]
