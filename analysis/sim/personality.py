"""Players and their personalities: the tendencies the simulator plants in a season.

A :class:`Personality` is a frozen set of named knobs a bot obeys (bids, nils, bags,
care).  :func:`default_club` is the club of twelve named players the sample season
is played by; every planted value is documented there so that analyses can be
checked against the truth (a known overbidder should come out as one).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, fields


@dataclass(frozen=True, slots=True)
class Personality:
    """How one player bids and plays.

    All rates are probabilities in 0..1; ``bid_bias`` is in tricks.

    - ``bid_bias``: tricks added to the bot's estimate of its hand before rounding
      (+1.0 is a habitual overbidder, -1.0 an underbidder).
    - ``nil_appetite``: how many high cards a hand may hold for a nil, and how often a
      nil-able hand is bid nil (0 never bids nil, 0.35 is an ordinary player, 0.95
      bids nil on middling hands).
    - ``blind_nil_appetite``: chance of bidding blind nil (``barmore``: blind seven, as
      the first of the side to speak) in a hand where the side is 100 or more behind
      and the ruleset allows it.
    - ``bag_aversion``: chance, per card with a choice, of ducking (playing the highest
      card that loses, leading low) once the side's contract is made; the rest of the
      time the bot keeps winning tricks.
    - ``trump_partner_rate``: chance of trumping a trick the partner is already
      winning (when void in the suit led and holding a spade).
    - ``careless_rate``: chance, per card with a choice, of a careless play: a
      random legal card instead of the sensible one.  Careless plays are always
      legal; illegal plays come only from fault injection.
    """

    bid_bias: float = 0.0
    nil_appetite: float = 0.35
    blind_nil_appetite: float = 0.03
    bag_aversion: float = 0.5
    trump_partner_rate: float = 0.02
    careless_rate: float = 0.02

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise TypeError(f"Personality.{f.name} must be a number, not {v!r}")
            if f.name != "bid_bias" and not 0.0 <= v <= 1.0:
                raise ValueError(f"Personality.{f.name} must be between 0 and 1, not {v!r}")
        if not -4.0 <= self.bid_bias <= 4.0:
            raise ValueError(f"Personality.bid_bias must be between -4 and 4 tricks, not {self.bid_bias!r}")


AVERAGE = Personality()
"""An ordinary club player: no bid bias, the occasional nil, a little careless.  An average
bot bids about half a trick under what it takes, as club players do."""


@dataclass(frozen=True, slots=True)
class Player:
    """A named player and how they play."""

    name: str
    personality: Personality = field(default=AVERAGE)
    note: str = ""
    """What is planted, in words (for the data README)."""


_CLUB: tuple[Player, ...] = (
    Player("ana", Personality(), "average player (the control)"),
    Player("bo", Personality(bid_bias=1.3), "overbidder: bids 1.3 tricks above the hand"),
    Player("cy", Personality(bid_bias=-1.2, bag_aversion=0.3), "underbidder: bids 1.2 tricks below the hand, collects bags"),
    Player("di", Personality(nil_appetite=0.95, blind_nil_appetite=0.25), "nil lover: bids nil on middling hands, blind nil when behind"),
    Player("ed", Personality(careless_rate=0.25), "careless: a random legal card on one play in four"),
    Player("flo", Personality(bag_aversion=0.97), "bag-averse: ducks almost every trick once the contract is made"),
    Player("gus", Personality(trump_partner_rate=0.7), "partner-trumper: trumps partner's winning trick 70% of the time"),
    Player("hal", Personality(bid_bias=0.5, careless_rate=0.05), "slight overbidder"),
    Player("ivy", Personality(nil_appetite=0.0, blind_nil_appetite=0.0), "never bids nil"),
    Player("jo", Personality(bid_bias=-0.4, bag_aversion=0.8), "cautious: slight underbidder, avoids bags"),
    Player("kim", Personality(careless_rate=0.0, bag_aversion=0.6), "careful: never careless"),
    Player("lu", Personality(bid_bias=0.8, nil_appetite=0.6, trump_partner_rate=0.2), "bold: overbids, likes nil"),
)


def default_club() -> tuple[Player, ...]:
    """The twelve players of the sample club, in a fixed order, with planted personalities.

    ======  ===========================================================================
    name    planted (everything not named is the average: bid_bias 0, nil_appetite 0.35,
            blind_nil_appetite 0.03, bag_aversion 0.5, trump_partner_rate 0.02,
            careless_rate 0.02)
    ======  ===========================================================================
    ana     average (control)
    bo      overbidder, bid_bias +1.3
    cy      underbidder, bid_bias -1.2, bag_aversion 0.3
    di      nil lover, nil_appetite 0.95, blind_nil_appetite 0.25
    ed      careless, careless_rate 0.25
    flo     bag-averse, bag_aversion 0.97
    gus     partner-trumper, trump_partner_rate 0.7
    hal     slight overbidder, bid_bias +0.5, careless_rate 0.05
    ivy     never nil, nil_appetite 0, blind_nil_appetite 0
    jo      cautious, bid_bias -0.4, bag_aversion 0.8
    kim     careful, careless_rate 0, bag_aversion 0.6
    lu      bold, bid_bias +0.8, nil_appetite 0.6, trump_partner_rate 0.2
    ======  ===========================================================================
    """
    return _CLUB


def random_personality(rng: random.Random) -> Personality:
    """A plausible personality drawn from ``rng`` (for pools larger than the club)."""
    return Personality(
        bid_bias=round(rng.uniform(-0.8, 0.8), 2),
        nil_appetite=round(rng.uniform(0.1, 0.6), 2),
        blind_nil_appetite=round(rng.uniform(0.0, 0.15), 2),
        bag_aversion=round(rng.uniform(0.2, 0.8), 2),
        trump_partner_rate=round(rng.uniform(0.0, 0.1), 2),
        careless_rate=round(rng.uniform(0.0, 0.06), 3),
    )


def make_pool(players: int, rng: random.Random, personalities=None) -> tuple[Player, ...]:
    """The pool of ``players`` players a season draws tables from.

    ``personalities`` may be ``None`` (the :func:`default_club`, extended with generated
    players ``p13``, ``p14``... drawn from ``rng`` when more than 12 are asked for), a
    mapping ``name -> Personality``, or a sequence of :class:`Player`.  The first
    ``players`` entries are used; a shorter list is extended with generated players.
    Raises ``ValueError`` for fewer than 4 players or duplicate names.
    """
    if players < 4:
        raise ValueError(f"a season needs at least 4 players, not {players}")
    if personalities is None:
        base = list(default_club())
    elif isinstance(personalities, dict):
        base = [Player(str(n), p) for n, p in personalities.items()]
    else:
        base = []
        for p in personalities:
            if isinstance(p, Player):
                base.append(p)
            elif isinstance(p, tuple) and len(p) == 2:
                base.append(Player(str(p[0]), p[1]))
            else:
                raise TypeError(f"not a Player or (name, Personality): {p!r}")
    for p in base:
        if not isinstance(p.personality, Personality):
            raise TypeError(f"player {p.name!r}: {p.personality!r} is not a Personality")
    pool = base[:players]
    k = len(pool)
    while len(pool) < players:
        k += 1
        pool.append(Player(f"p{k}", random_personality(rng), "generated"))
    names = [p.name for p in pool]
    if len(set(names)) != len(names):
        raise ValueError(f"player names must be unique: {names}")
    return tuple(pool)


__all__ = ["AVERAGE", "Personality", "Player", "default_club", "make_pool", "random_personality"]
