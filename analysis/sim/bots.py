"""Bots that bid and play like club players (issue 5).

The bots never decide what is legal, who wins a trick or what a hand scores:
legal cards come from :class:`spadework.analysis.engine.replay.PlayState`, trick winners from the
replay, scores from :mod:`spadework.analysis.engine.scoring`, and every bidding option (nil, blind
nil, blind bids, side limits) from the :class:`~spadework.analysis.engine.rules.Ruleset`.  What the
bots add is judgement, read from the deck's own order (``Ruleset.suits`` and
``Ruleset.powers``): which legal card is cheap, which one is boss, which one would
take the trick.

- :class:`DeckInfo`: per-ruleset tables (suit of each card as it plays, power,
  each suit's cards from the top).
- :func:`estimate_tricks`: hand strength in tricks (sure tricks, spade length,
  voids and singletons to ruff).
- :func:`choose_bids`: one hand's bidding, in order from the dealer's left,
  with each player's :class:`~spadework.analysis.sim.personality.Personality`.
- :func:`play_hand`: the card play of one hand through ``PlayState``, with an
  optional hook that plants an illegal card (fault injection).

Units: tricks (0..13).  RULES.md sections 3 and 4.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from spadework.analysis.engine.replay import CompletedTrick, PlayState
from spadework.analysis.engine.rules import Ruleset
from spadework.analysis.sim.personality import Personality
from spadework.parsers.model import Bid
from spadework.parsers.seats import SEATS, SIDES, Seat

SPADE = "S"

# Seat geometry, precomputed from spadework.parsers.seats (the one place that knows it) for the hot loop:
# indexable by a Seat or its int value.
PARTNER: tuple[Seat, ...] = tuple(s.partner for s in SEATS)
LEFT: tuple[Seat, ...] = tuple(s.left for s in SEATS)
RIGHT: tuple[Seat, ...] = tuple(s.right for s in SEATS)
BACK: tuple[tuple[Seat, ...], ...] = tuple(tuple(s.after(-k) for k in range(4)) for s in SEATS)
"""``BACK[seat][k]``: the seat ``k`` places before ``seat`` in play order (who led, when k = position)."""
AHEAD: tuple[tuple[Seat, ...], ...] = tuple(tuple(s.after(k) for k in range(4)) for s in SEATS)
"""``AHEAD[seat][k]``: the seat ``k`` places after ``seat`` (who played the k-th card of a trick ``seat`` led)."""
SIDE_OF: tuple[int, ...] = tuple(int(s.side) for s in SEATS)
SIDE_SEATS: tuple[tuple[Seat, Seat], ...] = tuple(side.seats for side in SIDES)

# --- the deck as the bots see it -------------------------------------------------------------------


class DeckInfo:
    """Lookup tables a bot reads about one ruleset's deck (built once per ruleset).

    ``suit[c]``: the suit ``c`` plays as (``"S"`` for every trump); ``power[c]``: its
    order within that suit (trumps above everything), both read from the ruleset;
    ``suit_power[c]``: both at once; ``order[s]``: the cards of suit ``s`` from the
    highest down; ``rank[c]``: the position of ``c`` in ``order[suit]`` (0 = the top
    card); ``suit_rank[c]``: ``(suit index in S H D C, rank)``; ``hand_order``: the deck
    in hand order (:meth:`sort_key`: spades, hearts, diamonds, clubs, each from the top),
    the order hands are dealt in and so the order ``legal_cards`` lists them in.
    """

    __slots__ = (
        "ruleset", "suit", "power", "suit_power", "order", "rank", "suit_rank", "side_suits", "cards", "hand_order",
    )

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        deck = ruleset.deck
        self.cards = tuple(deck.cards)
        self.suit = {c: ruleset.suits[c] for c in deck.cards}
        self.power = {c: ruleset.powers[c] for c in deck.cards}
        self.suit_power = {c: (self.suit[c], self.power[c]) for c in deck.cards}
        order: dict[str, list[str]] = {}
        for c in sorted(deck.cards, key=lambda c: -self.power[c]):
            order.setdefault(self.suit[c], []).append(c)
        self.order = {s: tuple(v) for s, v in order.items()}
        self.rank = {c: i for v in self.order.values() for i, c in enumerate(v)}
        self.suit_rank = {c: ("SHDC".index(self.suit[c]), self.rank[c]) for c in self.cards}
        self.side_suits = tuple(s for s in "HDC" if s in self.order)
        self.hand_order = tuple(sorted(self.cards, key=self.sort_key))

    def sort_key(self, card: str) -> tuple[int, int]:
        """Hand order: suit (S H D C as the card plays), then from the highest down."""
        return ("SHDC".index(self.suit[card]), -self.power[card])


_DECK_INFO: dict[int, DeckInfo] = {}


def deck_info(ruleset: Ruleset) -> DeckInfo:
    """The (cached) :class:`DeckInfo` of a ruleset."""
    key = id(ruleset)
    info = _DECK_INFO.get(key)
    if info is None or info.ruleset is not ruleset:
        if len(_DECK_INFO) > 256:
            _DECK_INFO.clear()
        info = _DECK_INFO[key] = DeckInfo(ruleset)
    return info


# --- bidding -------------------------------------------------------------------------------------

# estimate -> bid: chosen so that a table of average bots bids about 11.5 tricks in all and an
# average bot bids about half a trick under what it takes, as club players do (sets ~18%).
BID_SCALE = 1.0
BID_OFFSET = 0.4


def _side_value(rank: int, n: int) -> float:
    """Tricks expected from the card ranked ``rank`` (0 = ace) in a side suit of ``n`` cards."""
    if rank == 0:
        return 1.0 if n <= 5 else 0.6
    if rank == 1:
        return (0.75 if n <= 5 else 0.35) if n >= 2 else 0.25
    if rank == 2:
        return 0.35 if 3 <= n <= 4 else 0.1
    return 0.0


_SIDE_VALUE = tuple(tuple(_side_value(r, n) for n in range(14)) for r in range(3))
_DANGER = (1.0, 0.6, 0.25)


def hand_strength(hand: Sequence[str], info: DeckInfo) -> tuple[float, float, int, bool]:
    """``(estimate, nil_danger, spades, top_trump)`` of a hand in one pass.

    ``estimate``: tricks the hand should take (:func:`estimate_tricks`); ``nil_danger``:
    how likely it is to be forced to win a trick (aces, kings, queens, middle spades);
    ``spades``: how many spades it holds; ``top_trump``: it holds one of the three
    highest trumps.
    """
    sr = info.suit_rank
    danger = 0.0
    sp: list[int] = []
    lens = [0, 0, 0, 0]  # S H D C
    honours: list[tuple[int, int]] = []
    for c in hand:
        s, r = sr[c]
        if s:
            lens[s] += 1
            if r <= 2:
                honours.append((s, r))
                danger += _DANGER[r]
        else:
            sp.append(r)
            if 2 < r <= 5:
                danger += 0.6
    est = 0.0
    for s, r in honours:
        est += _SIDE_VALUE[r][lens[s]]
    n_sp = len(sp)
    top = False
    credited = 0
    if n_sp:
        sp.sort()
        top = sp[0] <= 2
        for i, p in enumerate(sp):
            gap = p - i  # higher trumps held by others
            if gap <= 0:
                est += 1.0
                credited += 1
            elif gap == 1 and n_sp >= i + 2:
                est += 0.7
                credited += 1
            elif gap == 2 and n_sp >= i + 3:
                est += 0.4
                credited += 1
            elif gap > 2:
                break
    long_sp = n_sp - 4 if n_sp > 4 else 0
    est += 0.8 * long_sp
    spare = n_sp - credited - long_sp
    if spare > 0:
        for n in (lens[1], lens[2], lens[3]):
            if n == 0:
                est += 0.8 if spare >= 2 else 0.5
                spare -= 2
            elif n == 1:
                est += 0.45
                spare -= 1
            elif n == 2 and spare >= 2:
                est += 0.15
            if spare <= 0:
                break
    return est, danger, n_sp, top


def estimate_tricks(hand: Sequence[str], info: DeckInfo) -> float:
    """How many tricks ``hand`` should take, in tricks (before any personality or scaling).

    Side suits: an ace is a trick (less in a long suit that will be ruffed), a guarded
    king most of one, a queen with two guards a little.  Spades: a top trump is a trick,
    a trump with enough small ones to guard it most of one; length beyond four adds
    tricks; a void or singleton in a side suit adds ruffs for spare spades.
    """
    return hand_strength(hand, info)[0]


def nil_safe(hand: Sequence[str], info: DeckInfo, appetite: float) -> bool:
    """Whether ``hand`` is short enough of high cards for a player of this nil appetite.

    No top-three trump; at most three spades (four for a nil lover); aces, kings,
    queens and middle spades within what the appetite accepts.
    """
    _, danger, n_sp, top = hand_strength(hand, info)
    return _nil_ok(danger, n_sp, top, appetite)


def _nil_ok(danger: float, n_sp: int, top: bool, appetite: float) -> bool:
    if top or n_sp > (4 if appetite >= 0.8 else 3):
        return False
    return danger <= 0.3 + 1.5 * appetite


def choose_bids(
    hands: Sequence[Sequence[str]],
    dealer: Seat,
    personalities: Sequence[Personality],
    ruleset: Ruleset,
    rng: random.Random,
    totals: tuple[int, int] = (0, 0),
    force_blind: bool = False,
) -> list[Bid]:
    """The bids of one hand, in the order made (from the dealer's left, clockwise).

    ``hands``/``personalities``: N E S W.  ``totals``: (NS, EW) before the hand (blind
    nil and blind bids depend on them).  A seat of a side 100 or more behind bids blind
    nil (or, with the ruleset's blind numeric bids, blind, if it is the first of its side
    to speak) with its ``blind_nil_appetite``, where the ruleset allows it;
    nil on a weak hand (:func:`nil_safe`) with its ``nil_appetite``; otherwise its
    estimate (:func:`estimate_tricks`, scaled by :data:`BID_SCALE`/:data:`BID_OFFSET`)
    plus its ``bid_bias`` (half a trick more when its partner bid nil, half a trick less
    when its side's total is below 0), rounded at random, kept within 1..13 and the side
    limits.
    The partner of a blind numeric bidder makes no bid unless the ruleset says it does.

    ``force_blind``: fault injection (BLIND_BID_NOT_ALLOWED): the first seat for which
    the ruleset's blind bid is not allowed (blind nil while not behind enough; a blind
    number after the partner has bid, or while not behind enough) makes it.
    """
    info = deck_info(ruleset)
    bids: list[Bid] = []
    by_seat: list[Bid | None] = [None, None, None, None]
    silent: set[Seat] = set()
    nil_allowed = ruleset.nil
    limits = ruleset.max_side_bid is not None or ruleset.min_side_bid is not None
    # a bot thinks of bidding blind only when a side is 100 or more behind (or blind nil is always allowed)
    blind_possible = abs(totals[0] - totals[1]) >= 100 or ruleset.blind_nil == "always"
    for seat in dealer.left.clockwise():
        if seat in silent:
            continue
        pers = personalities[seat]
        side = SIDE_OF[seat]
        own, other = totals[side], totals[1 - side]
        partner = by_seat[PARTNER[seat]]
        partner_nil = partner is not None and partner.nil
        bid: Bid | None = None
        if force_blind:
            bid = _forced_blind(seat, ruleset, partner, own, other)
            if bid is not None:
                force_blind = False
        if bid is None and pers.blind_nil_appetite > 0 and not partner_nil and blind_possible:
            if ruleset.blind_nil_allowed(own, other) and rng.random() < pers.blind_nil_appetite:
                bid = Bid(seat, 0, nil=True, blind=True)
            elif (
                ruleset.blind_bids is not None
                and partner is None
                and other - own >= 100
                and ruleset.blind_bid_score_allowed(own, other)
                and rng.random() < pers.blind_nil_appetite
            ):
                bid = Bid(seat, ruleset.blind_bids["values"][0], blind=True)
        if bid is None:
            est, danger, n_sp, top = hand_strength(hands[seat], info)
            if (
                nil_allowed
                and not partner_nil
                and pers.nil_appetite > 0
                and _nil_ok(danger, n_sp, top, pers.nil_appetite)
                and rng.random() < 0.5 + 0.5 * pers.nil_appetite
                and not (partner is not None and partner.value < 3)
            ):
                bid = Bid(seat, 0, nil=True)
            else:
                x = BID_SCALE * est + BID_OFFSET + pers.bid_bias
                if partner_nil:
                    x += 0.5  # cover for the nil
                if own < 0:
                    x -= 0.5  # a side in the hole bids carefully
                value = int(x // 1)
                if rng.random() < x - value:  # round at random, keeping the expectation
                    value += 1
                if limits:
                    lo, hi = 1, 13
                    if partner is not None and not partner.nil:
                        if ruleset.max_side_bid is not None:
                            hi = min(hi, ruleset.max_side_bid - int(partner.value))
                        if ruleset.min_side_bid is not None:
                            lo = max(lo, ruleset.min_side_bid - int(partner.value))
                    elif partner is None and ruleset.max_side_bid is not None:
                        hi = min(hi, ruleset.max_side_bid - 1)
                    value = max(1, min(max(value, lo), max(hi, lo)))
                elif value < 1:
                    value = 1
                elif value > 13:
                    value = 13
                bid = Bid(seat, value)
        bids.append(bid)
        by_seat[seat] = bid
        if bid.blind and not bid.nil and not ruleset.blind_partner_bids and by_seat[seat.partner] is None:
            silent.add(seat.partner)
    return bids


def _forced_blind(seat: Seat, ruleset: Ruleset, partner: Bid | None, own: int, other: int) -> Bid | None:
    """The blind bid ``seat`` may NOT make here (fault injection), or ``None`` if every blind bid is allowed."""
    if ruleset.blind_nil_allowed(own, other) is False:
        return Bid(seat, 0, nil=True, blind=True)
    if ruleset.blind_bids is not None:
        late = partner is not None and not ruleset.blind_partner_bids
        if late or not ruleset.blind_bid_score_allowed(own, other):
            return Bid(seat, ruleset.blind_bids["values"][0], blind=True)
    return None


# --- card play -----------------------------------------------------------------------------------

PlantHook = Callable[[PlayState, list[str]], "tuple[str, Seat | None] | None"]
"""Fault injection: called before each card with the position and the legal cards;
returns ``(card, lead_seat)`` to play instead (``lead_seat`` for an out-of-turn lead),
or ``None`` to let the bot choose."""


_RATES: dict[tuple[Personality, ...], tuple[tuple[float, ...], ...]] = {}
"""Per-seat rates of a table's personalities (careless, bag aversion, trumping partner), cached."""


class HandPlay:
    """The card play of one hand: four bots around one :class:`PlayState`.

    Build, then call :meth:`run`.  ``bids``: each seat's bid as the bots heard it
    (N E S W; ``None`` for a silent partner).  ``personalities``: N E S W.
    ``plant``: the fault-injection hook (:data:`PlantHook`).

    The bots' judgement, in order of priority, for a card with a choice:
    a careless player (``careless_rate``) plays a random legal card; a nil bidder
    ducks, shedding its highest safe card; the partner of a nil bidder covers it;
    an opponent of a nil bidder plays under it; with the partner winning the trick a
    player keeps its cards (or trumps anyway, ``trump_partner_rate``); once the side's
    contract is made a bag-averse player (``bag_aversion``) ducks; otherwise a player
    wins as cheaply as it can (second hand low unless holding the boss, third hand high,
    last hand just enough, a void player ruffs with its lowest spade) and discards from
    a short side suit when it cannot win.  Leads: a nil bidder leads low; a nil bidder's
    partner cashes high cards; against a nil, low leads; a bag-averse side that has made
    its contract leads low; otherwise boss cards first, then a short side suit (to ruff
    later), then the longest side suit from the bottom.

    Legal cards arrive in hand order (the deal is sorted: spades, hearts, diamonds,
    clubs, each from the top), which the judgement relies on for speed.
    """

    __slots__ = (
        "state", "info", "suit", "power", "sp", "order", "rng", "rnd", "pers", "careless", "bag_av", "trump_rate",
        "contract", "made", "nil", "live_nil", "taken", "played", "top", "plant",
    )

    def __init__(
        self,
        state: PlayState,
        ruleset: Ruleset,
        bids: Sequence[Bid | None],
        personalities: Sequence[Personality],
        rng: random.Random,
        plant: PlantHook | None = None,
    ) -> None:
        self.state = state
        info = self.info = deck_info(ruleset)
        self.suit = info.suit
        self.power = info.power
        self.sp = info.suit_power
        self.order = info.order
        self.rng = rng
        self.rnd = rng.random
        self.pers = personalities
        key = personalities if isinstance(personalities, tuple) else tuple(personalities)
        rates = _RATES.get(key)
        if rates is None:
            rates = _RATES[key] = (
                tuple(p.careless_rate for p in personalities),
                tuple(p.bag_aversion for p in personalities),
                tuple(p.trump_partner_rate for p in personalities),
            )
        self.careless, self.bag_av, self.trump_rate = rates
        contract = [0, 0]
        nil = [False, False, False, False]
        for s in SEATS:
            b = bids[s]
            if b is None:
                continue
            if b.nil:
                nil[s] = True
            elif isinstance(b.value, (int, float)):
                contract[SIDE_OF[s]] += int(b.value)
        self.contract = contract
        self.made = [contract[0] <= 0, contract[1] <= 0]  # each side's contract already made
        self.nil = nil
        self.live_nil = any(nil)
        self.taken = [0, 0, 0, 0]
        self.played: set[str] = set()
        self.top = dict.fromkeys(info.order, 0)  # index of the highest unplayed card per suit (lazy)
        self.plant = plant

    def run(self) -> list[CompletedTrick]:
        """Play the hand to the end (52 cards); returns the completed tricks."""
        if self.plant is not None:
            return self._run_planted()
        st = self.state
        rnd = self.rnd
        careless = self.careless
        taken = self.taken
        played = self.played
        legal_cards = st.legal_cards
        play = st.play
        follow = self._follow
        lead = self._lead
        made = self.made
        contract = self.contract
        for _ in range(13):
            # the lead
            legal = legal_cards()
            if len(legal) == 1:
                card = legal[0]
            else:
                seat = st.to_play
                card = legal[int(rnd() * len(legal))] if rnd() < careless[seat] else lead(seat, legal)
            play(card)
            trick = [card]
            # three cards follow
            for _ in range(2):
                legal = legal_cards()
                if len(legal) == 1:
                    card = legal[0]
                else:
                    seat = st.to_play
                    card = legal[int(rnd() * len(legal))] if rnd() < careless[seat] else follow(seat, legal, trick)
                play(card)
                trick.append(card)
            legal = legal_cards()
            if len(legal) == 1:
                card = legal[0]
            else:
                seat = st.to_play
                card = legal[int(rnd() * len(legal))] if rnd() < careless[seat] else follow(seat, legal, trick)
            done = play(card)
            w = done.winner
            taken[w] += 1
            played.update(done.cards)
            side = SIDE_OF[w]
            if not made[side] and taken[w] + taken[PARTNER[w]] >= contract[side]:
                made[side] = True
            if self.live_nil:
                nil = self.nil
                self.live_nil = any(nil[s] and not taken[s] for s in SEATS)
        return st.completed

    def _run_planted(self) -> list[CompletedTrick]:
        """:meth:`run` with the fault-injection hook asked before every card."""
        st = self.state
        plant = self.plant
        rnd = self.rnd
        careless = self.careless
        taken = self.taken
        played = self.played
        nil = self.nil
        trick: list[str] = []
        for _ in range(52):  # 13 tricks of 4 cards, whoever plays them
            legal = st.legal_cards()
            got = plant(st, legal)  # type: ignore[misc]
            if got is not None:
                card, lead_seat = got
            else:
                lead_seat = None
                if len(legal) == 1:
                    card = legal[0]
                else:
                    seat = st.to_play
                    if rnd() < careless[seat]:
                        card = legal[int(rnd() * len(legal))]
                    elif trick:
                        card = self._follow(seat, legal, trick)
                    else:
                        card = self._lead(seat, legal)
            done = st.play(card, lead_seat)
            if done is None:
                trick.append(card)
            else:
                trick = []
                w = done.winner
                taken[w] += 1
                played.update(done.cards)
                side = SIDE_OF[w]
                if not self.made[side] and taken[w] + taken[PARTNER[w]] >= self.contract[side]:
                    self.made[side] = True
                if self.live_nil:
                    self.live_nil = any(nil[s] and not taken[s] for s in SEATS)
        return st.completed

    # --- helpers ---

    def _is_boss(self, card: str) -> bool:
        """``card`` is the highest card of its suit not played in an earlier trick."""
        s = self.suit[card]
        seq = self.order[s]
        i = self.top[s]
        played = self.played
        n = len(seq)
        while i < n and seq[i] in played:
            i += 1
        self.top[s] = i
        return i < n and seq[i] == card

    def _lowest_lead(self, legal: list[str]) -> str:
        """The lowest card, side suits before spades."""
        suit, power = self.suit, self.power
        best = legal[-1]
        bp = power[best]
        for c in legal:
            if suit[c] != SPADE and power[c] < bp:
                best, bp = c, power[c]
        return best

    # --- leading ---

    def _lead(self, seat: Seat, legal: list[str]) -> str:
        if self.live_nil:
            got = self._lead_nil(seat, legal)
            if got is not None:
                return got
        if self.made[SIDE_OF[seat]] and self.rnd() < self.bag_av[seat]:
            return self._lowest_lead(legal)
        suit = self.suit
        top, order, played = self.top, self.order, self.played
        # one pass over the suits held (each from its highest card): cash a side-suit boss card
        starts = []
        prev = ""
        i = 0
        for c in legal:
            s = suit[c]
            if s != prev:
                prev = s
                starts.append(i)
                if s != SPADE:
                    seq = order[s]
                    j = top[s]
                    while seq[j] in played:  # stops at c at the latest: c is not played
                        j += 1
                    top[s] = j
                    if seq[j] == c:
                        return c
            i += 1
        n = len(legal)
        starts.append(n)
        spades = starts[1] if suit[legal[0]] == SPADE else 0
        # a boss spade draws trumps when long in them (or late in the hand)
        if spades and (n < 6 or spades >= 4) and self._is_boss(legal[0]):
            return legal[0]
        if spades and spades < n:
            # lead the lowest card of the shortest side suit (two or fewer), to ruff it later
            best = -1
            bn = 3
            for j in range(1, len(starts) - 1):
                k = starts[j + 1] - starts[j]
                if k < bn:
                    best, bn = starts[j + 1] - 1, k
            if best >= 0:
                return legal[best]
        # the lowest card of the longest side suit (of the spades when there is none)
        best = n - 1
        bn = 0
        for j in range(1 if spades else 0, len(starts) - 1):
            k = starts[j + 1] - starts[j]
            if k > bn:
                best, bn = starts[j + 1] - 1, k
        return legal[best]

    def _lead_nil(self, seat: Seat, legal: list[str]) -> str | None:
        taken, nil = self.taken, self.nil
        if nil[seat] and not taken[seat]:
            return self._lowest_lead(legal)
        partner = PARTNER[seat]
        if nil[partner] and not taken[partner]:
            # cash high cards so that partner can duck under them
            suit, rank = self.suit, self.info.rank
            best = legal[0]
            for c in legal:
                if suit[c] != SPADE and self._is_boss(c):
                    return c
                if rank[c] < rank[best]:
                    best = c
            return best
        left, right = LEFT[seat], RIGHT[seat]
        if (nil[left] and not taken[left]) or (nil[right] and not taken[right]):
            return self._lowest_lead(legal)
        return None

    # --- following ---

    def _follow(self, seat: Seat, legal: list[str], trick: list[str]) -> str:
        sp = self.sp
        pos = len(trick)
        # the card winning the trick so far, by the deck's order (the replay decides the real winner)
        led, wp = sp[trick[0]]
        ws = led
        win_pos = 0
        if pos > 1:
            cs, cp = sp[trick[1]]
            if cp > wp and (cs == ws or cs == SPADE):
                ws, wp, win_pos = cs, cp, 1
            if pos > 2:
                cs, cp = sp[trick[2]]
                if cp > wp and (cs == ws or cs == SPADE):
                    ws, wp, win_pos = cs, cp, 2
        power = self.power
        if sp[legal[0]][0] == led:
            # following suit: legal cards run from the highest down; the first k would win
            live = self.live_nil
            if win_pos == pos - 2 and not live:
                return legal[-1]  # partner is winning: keep the good cards
            n = len(legal)
            k = 0
            if ws == led:
                while k < n and power[legal[k]] > wp:
                    k += 1
            if live:
                return self._follow_nil(seat, legal[:k], legal[k:], False, pos, win_pos, ws)
            if self.made[SIDE_OF[seat]] and self.rnd() < self.bag_av[seat]:
                # duck: the highest card that still loses (the lowest when every card wins)
                return legal[k] if k < n else legal[-1]
            if k:
                if pos == 3:
                    return legal[k - 1]  # last hand: just enough
                if pos == 1:
                    c = legal[0]
                    seq = self.order[led]
                    j = self.top[led]
                    played = self.played
                    while seq[j] in played:  # stops at c at the latest: c is not played
                        j += 1
                    self.top[led] = j
                    if seq[j] != c:
                        return legal[-1]  # second hand low (without the boss)
                return legal[0]  # third hand high (second hand with the boss)
            return legal[-1]
        # void in the suit led: trump or discard
        winners = []
        losers = []
        for c in legal:
            cs, cp = sp[c]
            if cp > wp and (cs == ws or cs == SPADE):
                winners.append(c)
            else:
                losers.append(c)
        if self.live_nil:
            return self._follow_nil(seat, winners, losers, True, pos, win_pos, ws)
        if win_pos == pos - 2:
            if winners and ws != SPADE and self.rnd() < self.trump_rate[seat]:
                return winners[-1]
            return self._discard(losers) if losers else winners[-1]
        if self.made[SIDE_OF[seat]] and self.rnd() < self.bag_av[seat]:
            if losers:
                return max(losers, key=self._shed_key)
            return winners[-1]
        if winners:
            return winners[-1]  # ruff as cheaply as possible
        return self._discard(losers)

    def _follow_nil(
        self, seat: Seat, winners: list[str], losers: list[str], void: bool, pos: int, win_pos: int, ws: str
    ) -> str:
        """Following while some nil bid is still alive: duck it, cover it or set it.

        ``winners``/``losers``: the legal cards that would / would not take the trick now,
        each from the highest down when following suit."""
        taken, nil = self.taken, self.nil
        win_seat = AHEAD[BACK[seat][pos]][win_pos]
        partner = PARTNER[seat]
        if nil[seat] and not taken[seat]:
            if losers:
                return max(losers, key=self._shed_key) if void else losers[0]
            return winners[-1] if pos < 3 else winners[0]
        if nil[partner] and not taken[partner] and (win_seat == partner or pos < 2):
            if winners:
                return winners[0] if pos < 2 else winners[-1]
            return self._discard(losers) if void else losers[-1]
        left = LEFT[seat]
        if pos < 3 and nil[left] and not taken[left] and losers:
            return self._discard(losers) if void else losers[-1]
        if win_seat != partner and nil[win_seat] and not taken[win_seat]:
            if losers:
                return max(losers, key=self._shed_key) if void else losers[0]
            return winners[-1]
        # no nil at stake in this trick: play as usual
        if win_seat == partner:
            if void and winners and ws != SPADE and self.rnd() < self.trump_rate[seat]:
                return winners[-1]
            if losers:
                return self._discard(losers) if void else losers[-1]
            return winners[-1]
        if self.made[SIDE_OF[seat]] and self.rnd() < self.bag_av[seat]:
            if losers:
                return max(losers, key=self._shed_key) if void else losers[0]
            return winners[-1] if pos == 3 else winners[0]
        if winners:
            if pos == 3 or void:
                return winners[-1]
            if pos == 1 and not self._is_boss(winners[0]):
                return losers[-1] if losers else winners[-1]
            return winners[0]
        return self._discard(losers) if void else losers[-1]

    def _shed_key(self, card: str) -> tuple[bool, int]:
        """Order for shedding a loser: the highest side-suit card first, then spades."""
        return (self.suit[card] != SPADE, self.power[card])

    def _discard(self, losers: list[str]) -> str:
        """A card that loses anyway, when void in the suit led: the lowest card of the
        shortest side suit (to ruff that suit later); spades last."""
        suit = self.suit
        power = self.power
        counts: dict[str, int] = {}
        for c in losers:
            s = suit[c]
            counts[s] = counts.get(s, 0) + 1
        if len(counts) == 1:
            return losers[-1]
        best = losers[-1]
        best_key = (True, 99, 999)
        for c in losers:
            s = suit[c]
            key = (s == SPADE, counts[s], power[c])
            if key < best_key:
                best, best_key = c, key
        return best


def play_hand(
    deal: Sequence[Sequence[str]],
    leader: Seat,
    ruleset: Ruleset,
    bids: Sequence[Bid | None],
    personalities: Sequence[Personality],
    rng: random.Random,
    plant: PlantHook | None = None,
) -> PlayState:
    """Play one hand from ``deal`` (N E S W) with ``leader`` leading trick 1; returns the
    finished :class:`PlayState` (``completed`` tricks, ``taken``, ``findings``)."""
    st = PlayState.start(deal, leader, ruleset)
    HandPlay(st, ruleset, bids, personalities, rng, plant).run()
    return st


__all__ = [
    "BID_OFFSET",
    "BID_SCALE",
    "DeckInfo",
    "HandPlay",
    "PlantHook",
    "choose_bids",
    "deck_info",
    "estimate_tricks",
    "nil_safe",
    "play_hand",
]
