"""Replay a hand card by card: legal cards, findings, tricks taken (RULES.md sections 1, 3, 4 and 7).

This is the reference implementation of the rules of play.  It has three layers:

- :func:`legal_cards`: the cards a seat may play in a position (follow suit;
  no spade lead on trick 1 or before spades are broken unless the leader holds
  nothing but spades; option ``first_lead: two_of_clubs``).
- :class:`PlayState`: one hand's play as a position you can ask and advance,
  like a python-chess ``Board``: ``to_play``, ``legal_cards()``, ``can_play()``,
  ``play()``.  An illegal card is still played (the card that was played counts)
  and a :class:`~spadework.analysis.engine.findings.Finding` is recorded, so a replay never stops.
- :func:`replay_hand`: a whole :class:`~spadework.parsers.model.HandRecord`: the deal,
  the bidding and every trick, giving a :class:`HandReplay` (tricks, tricks
  taken per seat, findings).  Dealer rotation and scores need the other hands
  of the game and are checked in :mod:`spadework.analysis.engine.checker`.

Seats are :class:`~spadework.parsers.seats.Seat`, cards canonical codes (``"AS"``, ``"BJ"``);
suits are the suit a card *plays as* in the ruleset's deck (jokers and nyc's 2D
are ``"S"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from spadework.analysis.engine.findings import (
    BID_INVALID,
    BID_MISSING,
    BID_OUT_OF_TURN,
    BLIND_BID_NOT_ALLOWED,
    CARD_NOT_HELD,
    DEAL_INVALID,
    HAND_INCOMPLETE,
    LEAD_NOT_TWO_OF_CLUBS,
    LEAD_OUT_OF_TURN,
    RENEGE,
    SPADE_LED_BEFORE_BROKEN,
    SPADE_LED_FIRST_TRICK,
    TRICK_WINNER_MISMATCH,
    TRICKS_TAKEN_MISMATCH,
    ErrorPolicy,
    Finding,
    FindingList,
    where,
)
from spadework.analysis.engine.rules import Ruleset, get_ruleset
from spadework.parsers.cards import describe_suit
from spadework.parsers.model import Bid, HandRecord
from spadework.parsers.seats import SEATS, SIDES, Seat, Side

SPADE = "S"
TWO_OF_CLUBS = "2C"


class CompletedTrick(NamedTuple):
    """A finished trick as replayed.

    ``number`` 1..13; ``cards`` in play order from ``leader``; ``winner`` is ``None``
    for a trick recorded with fewer than 4 cards; ``led_suit`` is the suit the lead
    plays as (``"S"`` for a joker); ``spades_broken`` tells whether spades were
    broken when the trick was led.
    """

    number: int
    leader: Seat
    cards: tuple[str, ...]
    winner: Seat | None
    led_suit: str | None
    spades_broken: bool

    def seats(self) -> tuple[Seat, ...]:
        """The seat of each card, in play order."""
        return self.leader.clockwise()[: len(self.cards)]


# --- legal cards ----------------------------------------------------------------------------------


def legal_cards(
    held: Iterable[str],
    trick_so_far: Sequence[str],
    *,
    spades_broken: bool,
    trick_number: int,
    ruleset: Ruleset,
) -> list[str]:
    """The cards among ``held`` that may be played next (RULES.md section 4).

    ``trick_so_far``: the cards already played to the current trick, in play order
    (empty when leading).  ``trick_number``: 1..13.  Following: the cards of the
    suit led (as the deck plays it), or every card when void.  Leading: on trick 1,
    and from trick 2 on while spades are not broken (unless ``spades_lead_any_time``),
    no spade unless the leader holds nothing but spades; with ``first_lead:
    two_of_clubs`` the holder of the 2C must lead it to trick 1.
    Returns the cards in the order of ``held``; ``[]`` when nothing is held.
    """
    suits = ruleset.suits
    if not isinstance(held, (list, tuple)):
        held = list(held)
    if trick_so_far:
        led = suits[trick_so_far[0]]
        follow = [c for c in held if suits[c] == led]
        return follow or list(held)
    if trick_number == 1:
        if ruleset.first_lead == "two_of_clubs" and TWO_OF_CLUBS in held:
            return [TWO_OF_CLUBS]
    elif spades_broken or ruleset.spades_lead_any_time:
        return list(held)
    others = [c for c in held if suits[c] != SPADE]
    return others or list(held)


def first_leader(dealer: Seat, ruleset: Ruleset, deal: Sequence[Iterable[str]] | None = None, led: Seat | None = None) -> Seat:
    """Who leads trick 1 (RULES.md 4): left of ``dealer``, or, with ``first_lead: two_of_clubs``,
    the seat whose hand in ``deal`` (N E S W) holds the 2C (left of the dealer when nobody is
    known to hold it).  ``led``: the seat the log has leading trick 1; where the deal gives the
    2C to more than one seat (``DEAL_INVALID``), it leads in turn if it is one of them (else the
    first of them in N E S W order is expected)."""
    if ruleset.first_lead == "two_of_clubs" and deal is not None:
        holders = [seat for seat, cards in zip(SEATS, deal) if TWO_OF_CLUBS in cards]
        if holders:
            return led if led in holders else holders[0]
    return dealer.left


# --- the position ---------------------------------------------------------------------------------


class PlayState:
    """The play of one hand, position by position.

    Build with :meth:`start`; ask ``to_play``, :meth:`legal_cards`,
    :meth:`can_play`; advance with :meth:`play`.  ``play`` applies any card:
    an illegal one is recorded in ``findings`` (RENEGE, CARD_NOT_HELD,
    SPADE_LED_FIRST_TRICK, SPADE_LED_BEFORE_BROKEN, LEAD_OUT_OF_TURN,
    LEAD_NOT_TWO_OF_CLUBS) and still counts.

    Internals are plain lists and ints for speed (the simulator plays millions of cards).
    """

    __slots__ = (
        "ruleset",
        "game_id",
        "hand",
        "findings",
        "completed",
        "_suits",
        "_deck",
        "_deal",
        "_hands",
        "_inferred",
        "_to_play",
        "_leader",
        "_led",
        "_trick",
        "_trick_no",
        "_broken",
        "_lead_broken",
        "_taken",
        "_played",
        "_future",
        "_first_reason",
        "_doubtful",
        "_confirmed",
        "_unknown",
        "_maybe_broken",
        "_led_held",
        "_shared",
    )

    @classmethod
    def start(
        cls,
        deal: Sequence[Iterable[str]],
        leader: Seat,
        ruleset: Ruleset,
        *,
        game_id: str = "",
        hand: int | None = None,
        hands_inferred: bool = False,
        findings: list[Finding] | None = None,
        future: Mapping[str, Sequence[tuple[int, Seat]]] | None = None,
        first_lead_reason: str | None = None,
        doubtful: frozenset[str] | None = None,
    ) -> "PlayState":
        """The position before the first card of trick 1.

        ``deal``: four card collections in seat order N E S W; ``leader``: who leads
        trick 1 (see :func:`first_leader`).  ``game_id``/``hand`` go into findings.
        ``hands_inferred``: the deal is what each seat played (no recorded deal), so a
        card played a second time is CARD_NOT_HELD.  ``findings``: the list findings are
        appended to (a :class:`~spadework.analysis.engine.findings.FindingList` to raise at the first).
        ``future``: card -> ``[(trick, seat), ...]`` of its recorded plays, so a renege
        message can say when the held card was played.  ``first_lead_reason``: why
        ``leader`` leads trick 1, for the LEAD_OUT_OF_TURN message.  ``doubtful``: the cards
        some seat plays without holding them in this hand (CARD_NOT_HELD): no renege or lead
        finding rests on one of them (RULES.md section 7).  The same holds for a card outside the
        ruleset's deck (DEAL_INVALID): the log is wrong there, so its play gets no renege or lead
        finding and no finding rests on holding it.
        """
        self = cls.__new__(cls)
        self.ruleset = ruleset
        self.game_id = game_id
        self.hand = hand
        self.findings = [] if findings is None else findings
        self.completed = []
        self._suits = ruleset.suits
        self._deck = ruleset.deck
        self._deal = deal
        self._hands = [list(h) for h in deal]
        if len(self._hands) != 4:
            raise ValueError(f"a deal has 4 hands (N E S W), not {len(self._hands)}")
        self._inferred = hands_inferred
        self._to_play = int(leader)
        self._leader = int(leader)
        self._led = None
        self._trick = []
        self._trick_no = 1
        self._broken = False
        self._lead_broken = False
        self._taken = [0, 0, 0, 0]
        self._played = {}
        self._future = future
        self._first_reason = first_lead_reason
        # cards outside the deck (DEAL_INVALID) are as doubtful as a card played without being held
        self._doubtful = (doubtful or frozenset()) | {c for h in self._hands for c in h if c not in self._deck}
        self._confirmed = None  # per seat, worked out when a finding first needs it (_proof)
        self._unknown = [0, 0, 0, 0]
        self._maybe_broken = False
        self._led_held = True
        # cards dealt to two seats (DEAL_INVALID): once one of them plays it, nobody holds it
        seen: set[str] = set()
        self._shared = set()
        for h in self._hands:
            for c in h:
                (self._shared if c in seen else seen).add(c)
        return self

    # --- questions ---

    @property
    def to_play(self) -> Seat | None:
        """The seat to play next (``None`` after a short trick: nobody won it, so the next
        leader is whoever the record says; pass ``seat=`` to :meth:`play`)."""
        return None if self._to_play is None else SEATS[self._to_play]

    @property
    def trick_number(self) -> int:
        """The trick being played, 1..13 (14 once 13 tricks are over)."""
        return self._trick_no

    @property
    def current_trick(self) -> tuple[str, ...]:
        """The cards played so far to the current trick, in play order."""
        return tuple(self._trick)

    @property
    def trick_leader(self) -> Seat | None:
        """Who led the current trick (``None`` before its first card)."""
        return SEATS[self._leader] if self._trick else None

    @property
    def led_suit(self) -> str | None:
        """The suit the current trick's lead plays as, or ``None`` before the lead."""
        return self._led if self._trick else None

    @property
    def hands(self) -> tuple[tuple[str, ...], ...]:
        """What each seat still holds, N E S W."""
        return tuple(tuple(h) for h in self._hands)

    def held(self, seat: Seat) -> tuple[str, ...]:
        """What ``seat`` still holds."""
        return tuple(self._hands[seat])

    @property
    def spades_broken(self) -> bool:
        """Whether a spade has been played to an earlier trick, or to this one (RULES.md section 4).

        Legality of a lead only looks at it when the trick starts, so a spade played
        in the current trick matters from the next lead on."""
        return self._broken

    @property
    def taken(self) -> tuple[int, int, int, int]:
        """Tricks won so far per seat, N E S W."""
        return tuple(self._taken)  # type: ignore[return-value]

    @property
    def is_over(self) -> bool:
        """True once 13 tricks have been played."""
        return self._trick_no > 13

    def legal_cards(self) -> list[str]:
        """The cards ``to_play`` may play now (:func:`legal_cards`)."""
        if self._to_play is None:
            return []
        return legal_cards(
            self._hands[self._to_play],
            self._trick,
            spades_broken=self._broken,
            trick_number=self._trick_no,
            ruleset=self.ruleset,
        )

    def can_play(self, card: str) -> bool:
        """True when ``card`` is a legal play for ``to_play`` now."""
        return card in self.legal_cards()

    def copy(self) -> "PlayState":
        """An independent copy of the position (findings and finished tricks are copied too)."""
        other = PlayState.__new__(PlayState)
        for name in PlayState.__slots__:
            setattr(other, name, getattr(self, name))
        other._hands = [list(h) for h in self._hands]
        other._trick = list(self._trick)
        other._taken = list(self._taken)
        other._played = dict(self._played)
        other._unknown = list(self._unknown)
        other.completed = list(self.completed)
        other.findings = list(self.findings)
        return other

    # --- moves ---

    def play(self, card: str, seat: Seat | None = None, *, from_deal: bool = False) -> CompletedTrick | None:
        """Play ``card`` for ``to_play`` (or, when leading, for ``seat``) and return the
        trick if this card completed it.  ``from_deal``: the record lost this card and it is the
        one taken from the deal for the gap (RULES.md section 7): never CARD_NOT_HELD, since the
        log did not record it (a seat with two gaps and one card never played has it taken at both).

        A lead by another seat than ``to_play`` is LEAD_OUT_OF_TURN and the trick goes
        on clockwise from that seat (the card was played).  An illegal card is recorded
        as a finding and still played.  Raises ``ValueError`` for a non-leading ``seat``
        that is not ``to_play``, for a play when nobody is known to lead and no ``seat``
        is given, for an unknown card code, and after trick 13.
        """
        trick = self._trick
        s = self._to_play
        if self._trick_no > 13:
            raise ValueError("the hand is over: 13 tricks have been played")
        suits = self._suits
        try:
            cs = suits[card]
        except KeyError:
            raise ValueError(f"{card!r} is not a card code") from None
        foreign = card not in self._deck  # the log is wrong there (DEAL_INVALID): no renege or lead finding
        if not trick:
            if seat is not None and seat != s:
                # a card the seat does not hold gets no lead finding (RULES.md section 7)
                if s is not None and not foreign and card in self._hands[seat] and not (self._inferred and card in self._played):
                    self._lead_out_of_turn(int(seat), s, card)
                s = self._to_play = int(seat)
            elif s is None:
                raise ValueError("nobody is known to lead this trick; pass seat=")
            self._leader = s
            self._lead_broken = self._broken
            self._led = cs
        elif seat is not None and seat != s:
            raise ValueError(f"{Seat(seat)} cannot play now: it is {SEATS[s]}'s turn")
        hand = self._hands[s]
        held = card in hand and not (self._inferred and card in self._played)
        if not trick:
            self._led_held = held and not foreign
        if held and not foreign:
            if trick:
                led = self._led
                # no renege against the suit of a lead the leader did not hold: the log is wrong there
                if cs != led and self._led_held:
                    for c in hand:
                        if suits[c] == led:
                            self._renege(s, card, led, hand)
                            break
            else:
                self._check_lead(s, card, cs, hand)
            hand.remove(card)
        elif held:
            hand.remove(card)
        if held and card in self._shared:  # a card already played is held by nobody (RULES.md 7)
            for other in self._hands:
                while card in other:
                    other.remove(card)
        if not held:
            if not from_deal:
                self._not_held(s, card)
            if card in hand:
                hand.remove(card)
        self._played[card] = self._trick_no
        if cs == SPADE:  # a card outside the deck breaks spades by its own suit, as any card (RULES.md 4)
            self._broken = True
        trick.append(card)
        if len(trick) == 4:
            return self._finish()
        self._to_play = (s + 1) & 3
        return None

    def abandon_trick(self, leader: Seat | None = None, unknown: Iterable[Seat] = ()) -> CompletedTrick | None:
        """End a trick recorded with fewer than 4 cards: nobody wins it and the next
        leader is unknown (the next :meth:`play` must name it).

        Between tricks it does nothing, unless ``leader`` is given: then it records an
        empty trick led by ``leader`` (a log's trick with no cards) and moves on.
        ``unknown``: the seats whose card in this trick is unknown (a gap before the hand's
        last recorded trick, RULES.md section 7): from now on no renege or lead finding
        of theirs rests only on the card they may have played here, and no spade lead is
        flagged as before spades were broken when that card may have been a spade.
        """
        for seat in unknown:
            self._unknown[seat] += 1
            if not self._maybe_broken and any(self._suits[c] == SPADE for c in self._maybe_gone(int(seat))):
                self._maybe_broken = True
        if not self._trick:
            if leader is None or self._trick_no > 13:
                return None
            done = CompletedTrick(self._trick_no, Seat(leader), (), None, None, self._broken)
            self.completed.append(done)
            self._trick_no += 1
            self._to_play = None
            return done
        done = CompletedTrick(
            self._trick_no, SEATS[self._leader], tuple(self._trick), None, self._led, self._lead_broken
        )
        self.completed.append(done)
        self._trick = []
        self._trick_no += 1
        self._to_play = None
        return done

    def _played_later(self, seat: int, card: str) -> bool:
        """True when the record has ``seat`` play ``card`` in a later trick."""
        if self._future is None:
            return False
        return any(st == seat and t > self._trick_no for t, st in self._future.get(card, ()))

    def _maybe_gone(self, seat: int) -> list[str]:
        """The cards ``seat`` may have played to a trick whose card of its is unknown: those it
        holds and never plays later (without a deal: any card of the deck nobody plays)."""
        if self._inferred:
            played = self._future or {}
            return [c for c in self._deck.cards if c not in played]
        return [c for c in self._hands[seat] if not self._played_later(seat, c)]

    def _proof(self, seat: int, cards: list[str]) -> list[str]:
        """The cards among ``cards`` (held by ``seat``) a finding may rest on: never a card some
        seat plays without holding it (unless ``seat`` itself was dealt it and plays it: its holding is
        then beyond doubt), and none at all when every one of them may be the card the seat played to
        a trick whose card of its is unknown."""
        if self._confirmed is None:
            # a doubtful card is beyond doubt for the seat it was dealt to (without a deal: the seat
            # that played it first) when that seat plays it in the hand: it held the card, whoever
            # else played it
            plays = self._future or {}
            self._confirmed = [
                {c for c in h if c in self._deck and any(int(st) == s for _, st in plays.get(c, ()))}
                for s, h in enumerate(self._deal)
            ]
        confirmed = self._confirmed[seat]
        cards = [c for c in cards if c not in self._doubtful or c in confirmed]
        k = self._unknown[seat]
        if k and cards and len(cards) <= k and not any(self._played_later(seat, c) for c in cards):
            return []
        return cards

    def _finish(self) -> CompletedTrick:
        trick = self._trick
        leader = self._leader
        winner = (leader + self._deck.winner_index(trick)) & 3
        self._taken[winner] += 1
        done = CompletedTrick(
            self._trick_no, SEATS[leader], tuple(trick), SEATS[winner], self._led, self._lead_broken
        )
        self.completed.append(done)
        self._trick = []
        self._trick_no += 1
        self._to_play = winner
        return done

    # --- findings (the slow path) ---

    def _add(self, code: str, seat: int, card: str | None, message: str) -> None:
        st = SEATS[seat]
        self.findings.append(
            Finding(
                code=code,
                game_id=self.game_id,
                hand=self.hand,
                trick=self._trick_no,
                seat=st,
                card=card,
                side=st.side,
                message=message,
            )
        )

    def _where(self) -> str:
        return where(self.hand, self._trick_no)

    def _lead_out_of_turn(self, seat: int, expected: int, card: str) -> None:
        if self._trick_no == 1:
            reason = self._first_reason or "to lead trick 1"
        else:
            reason = f"won trick {self._trick_no - 1}"
        self._add(
            LEAD_OUT_OF_TURN,
            seat,
            card,
            f"{self._where()}: {SEATS[seat]} led {card}, but {SEATS[expected]} should have led ({SEATS[expected]} {reason})",
        )

    def _check_lead(self, s: int, card: str, cs: str, hand: list[str]) -> None:
        suits = self._suits
        first = self._trick_no == 1
        if (
            first
            and card != TWO_OF_CLUBS
            and self.ruleset.first_lead == "two_of_clubs"
            and TWO_OF_CLUBS in hand
            and self._proof(s, [TWO_OF_CLUBS])
        ):
            # the whole finding for that lead: no SPADE_LED_FIRST_TRICK too (RULES.md section 7)
            self._add(
                LEAD_NOT_TWO_OF_CLUBS,
                s,
                card,
                f"{self._where()}: {SEATS[s]} led {card} to the first trick, but the holder of the 2C must lead it",
            )
            return
        if cs != SPADE or not (first or not (self._broken or self.ruleset.spades_lead_any_time)):
            return
        if not first and self._maybe_broken:
            return  # a card missing from an earlier trick may have broken spades
        others = self._proof(s, [c for c in hand if suits[c] != SPADE])
        if not others:
            return
        other = others[0]
        if first:
            self._add(
                SPADE_LED_FIRST_TRICK,
                s,
                card,
                f"{self._where()}: {SEATS[s]} led {card} to the first trick while holding {other}",
            )
        else:
            self._add(
                SPADE_LED_BEFORE_BROKEN,
                s,
                card,
                f"{self._where()}: {SEATS[s]} led {card} before spades were broken, while holding {other}",
            )

    def _renege(self, s: int, card: str, led: str, hand: list[str]) -> None:
        suits = self._suits
        options = self._proof(s, [c for c in hand if suits[c] == led])
        if not options:
            return
        shown, later = options[0], None
        if self._future is not None:
            best = None
            for c in options:
                for t, st in self._future.get(c, ()):
                    if st == s and t > self._trick_no and (best is None or t < best[0]):
                        best = (t, c)
            if best is not None:
                later, shown = best
        note = f" (played in trick {later})" if later is not None else ""
        self._add(
            RENEGE,
            s,
            card,
            f"{self._where()}: {SEATS[s]} reneged, playing {card} on a {describe_suit(led)} lead "
            f"while holding {shown}{note}",
        )

    def _not_held(self, s: int, card: str) -> None:
        seat = SEATS[s]
        if card in self._played:
            why = f"it was already played in trick {self._played[card]}"
        elif self._inferred:
            why = "no deal is recorded and it was never dealt to it"
        else:
            holder = next((SEATS[i] for i, h in enumerate(self._deal) if card in h), None)
            why = f"it was dealt to {holder}" if holder is not None else "no seat was dealt it"
        self._add(CARD_NOT_HELD, s, card, f"{self._where()}: {seat} played {card}, which {seat} does not hold ({why})")


# --- a whole hand ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HandReplay:
    """What replaying one hand gives.

    ``tricks``: the replayed tricks.  ``taken``: tricks won per seat (N E S W) in the
    replay.  ``taken_for_score``: the tricks per seat the hand is scored on (the replay
    when all 13 tricks were played; else the recorded ``taken`` when there is one; else
    the tricks played).  ``bids``: each seat's bid that counts (N E S W; ``None`` for
    a seat with no bid, e.g. the silent partner of a blind seven; a second bid is
    ignored).  ``complete``: 13 tricks of 4 cards were played (a card taken from the deal
    for a gap counts as played).  ``reneges``: the seat of each RENEGE, in order (for
    ``renege_penalty_tricks``).  ``score_known``: the tricks each seat took are known: 13
    tricks played, a tricks-taken record, or no trick before the last recorded one left without
    a winner by a gap (a hand that stops early is scored on the tricks played, RULES.md section 5
    item 6).  When not, the hand's recorded score is not checked and the game goes on from it
    (RULES.md section 7, "Gaps in the record").
    """

    game_id: str
    hand: int
    tricks: tuple[CompletedTrick, ...]
    taken: tuple[int, int, int, int]
    taken_for_score: tuple[int, int, int, int]
    bids: tuple[Bid | None, Bid | None, Bid | None, Bid | None]
    findings: list[Finding]
    complete: bool
    reneges: tuple[Seat, ...]
    score_known: bool = True


class CleanPlay(NamedTuple):
    """What a replay of a hand that found nothing in its deal or its card play gave (no code of
    :data:`PLAY_CODES`), for :func:`replay_hand` to write the rest of the hand's findings from.
    ``taken``: the tricks each seat (N E S W) won; ``complete``: 13 tricks of 4 cards were played.
    Only for a complete hand or one with a tricks-taken record (else the hand is HAND_INCOMPLETE)."""

    taken: tuple[int, int, int, int]
    complete: bool


PLAY_CODES: frozenset[str] = frozenset(
    {
        DEAL_INVALID,
        LEAD_OUT_OF_TURN,
        LEAD_NOT_TWO_OF_CLUBS,
        CARD_NOT_HELD,
        SPADE_LED_FIRST_TRICK,
        SPADE_LED_BEFORE_BROKEN,
        RENEGE,
        HAND_INCOMPLETE,
        TRICK_WINNER_MISMATCH,
    }
)
"""The codes the card play of a hand can raise in :func:`replay_hand` (a hand with none of them
may be given as a :class:`CleanPlay`).  DEAL_INVALID and HAND_INCOMPLETE also have causes
outside the play (the deal; no tricks-taken record): a hand with either is replayed whole."""


def _fmt_bid(b: Bid) -> str:
    if b.nil or b.value == 0:
        return "blind nil" if b.blind else "nil"
    return f"blind {b.value}" if b.blind else f"{b.value}"


def _check_deal(rec: HandRecord, ruleset: Ruleset, out: list[Finding]) -> None:
    """One DEAL_INVALID finding for the hand, naming every problem of the deal in one sentence.

    Its seat and card are those of the first problem found: a card outside the deck, else a card
    dealt twice (on the seat holding too many cards, else the later seat), else a seat with the
    wrong number of cards (no card).
    """
    deal = rec.deal
    assert deal is not None
    deck = ruleset.deck
    seen: dict[str, Seat] = {}
    texts: list[str] = []
    outside: tuple[Seat, str] | None = None
    twice: tuple[Seat, str] | None = None
    count: Seat | None = None
    for seat, cards in zip(SEATS, deal):
        if len(cards) != 13:
            texts.append(f"{seat} was dealt {len(cards)} cards, not 13")
            if count is None:  # the first seat with a wrong count (N is Seat 0: never `count or seat`)
                count = seat
    for seat, cards in zip(SEATS, deal):
        for c in cards:
            if c not in deck:
                texts.append(f"{c} is not in the {ruleset.preset} deck")
                outside = outside or (seat, c)
            elif c in seen:
                other = seen[c]
                texts.append(f"{c} is dealt to {seat} twice" if other == seat else f"{c} is dealt to both {other} and {seat}")
                holder = other if len(deal[other]) > 13 and len(deal[seat]) <= 13 else seat
                twice = twice or (holder, c)
            else:
                seen[c] = seat
    if not texts:
        return
    missing = [c for c in deck.cards if c not in seen]
    if missing:
        texts.append("not dealt: " + " ".join(missing))
    seat, card = outside or twice or (count, None)
    out.append(
        Finding(
            code=DEAL_INVALID,
            game_id=rec.game_id,
            hand=rec.hand,
            seat=seat,
            card=card,
            side=None if seat is None else seat.side,
            message=f"{where(rec.hand)}: the deal is wrong: " + "; ".join(texts),
        )
    )


def _valid_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and float(value).is_integer() and 1 <= value <= 13


def _check_bids(
    rec: HandRecord, ruleset: Ruleset, score_before: tuple[int, int], out: list[Finding], scores_known: bool = True
) -> tuple[Bid | None, Bid | None, Bid | None, Bid | None]:
    gid, h = rec.game_id, rec.hand
    # the order bids are due in, among the seats that bid at all (a seat with no bid is
    # BID_MISSING, which does not make the seats after it speak out of turn)
    bidders = {b.seat for b in rec.bids}
    order = rec.dealer.left.clockwise()
    # nor is the silent partner of a blind numeric bid by the first partner to speak (it bids nothing
    # of its own), even when it bids anyway after the blind bid: that bid is out of turn and ignored
    # (below), not a seat the others wait for
    seen: set[Seat] = set()
    silent: dict[Seat, Seat] = {}  # silent partner -> blind bidder
    for b in rec.bids:
        if b.seat in seen or b.seat in silent:
            continue
        seen.add(b.seat)
        if (b.blind and not (b.nil or b.value == 0) and _valid_number(b.value) and ruleset.blind_bid_known(b.value)
                and not ruleset.blind_partner_bids and b.seat.partner not in seen):  # fmt: skip
            silent[b.seat.partner] = b.seat
    pending = [s for s in order if s in bidders and s not in silent]
    effective: list[Bid | None] = [None, None, None, None]
    valid = [False, False, False, False]

    def add(code: str, seat: Seat | None, msg: str, side: Side | None = None) -> None:
        out.append(
            Finding(
                code=code,
                game_id=gid,
                hand=h,
                seat=seat,
                side=side if side is not None else (None if seat is None else seat.side),
                message=f"{where(h)}: {msg}",
            )
        )

    for b in rec.bids:
        s = b.seat
        text = _fmt_bid(b)
        if effective[s] is not None:
            add(BID_OUT_OF_TURN, s, f"{s} bid a second time ({text} after {_fmt_bid(effective[s])}); the second bid is ignored")
            continue
        if s in silent:
            add(
                BID_OUT_OF_TURN,
                s,
                f"{s} bid {text}, but its partner's {_fmt_bid(effective[silent[s]])} is the side's bid; ignored",  # type: ignore[arg-type]
            )
            continue
        if s in pending:
            # spoke early: more seats due before it are still to bid than seats due after it have
            # already bid (its bid came before its place in the order; two swapped bids, next to
            # each other or not, are one finding, on the seat that spoke early: RULES.md section 3)
            due_before = pending.index(s)
            spoke_after = sum(1 for x in order[order.index(s) + 1 :] if effective[x] is not None)
            if spoke_after < due_before:
                add(BID_OUT_OF_TURN, s, f"{s} bid {text} out of turn: {pending[0]} was to bid first")
            pending.remove(s)
        effective[s] = b
        side = s.side
        own, other = score_before[side], score_before[side.other]
        is_nil = b.nil or b.value == 0
        ok = True
        if is_nil and b.blind:
            allowed = ruleset.blind_nil_allowed(own, other)
            if allowed is None:
                add(BID_INVALID, s, f"{s} bid blind nil, which the {ruleset.preset} rules do not have")
                ok = False
            elif not allowed and scores_known:
                need = ruleset.blind_nil["behind_by"]  # type: ignore[index]
                add(
                    BLIND_BID_NOT_ALLOWED,
                    s,
                    f"{s} bid blind nil, but {side} may bid blind nil only when behind by {need} or more "
                    f"({side} {own}, {side.other} {other})",
                )
        elif is_nil:
            if not ruleset.nil:
                add(BID_INVALID, s, f"{s} bid nil, which the {ruleset.preset} rules do not allow")
                ok = False
        elif not _valid_number(b.value):
            shown = f"blind {b.value}" if b.blind else f"{b.value}"
            add(BID_INVALID, s, f"{s} bid {shown}, which is not a bid (a whole number 1 to 13, or nil)")
            ok = False
        elif b.blind:
            partner = s.partner
            if not ruleset.blind_bid_known(b.value):
                have = "" if ruleset.blind_bids is None else f" (blind bids: {', '.join(map(str, ruleset.blind_bids['values']))})"
                add(BID_INVALID, s, f"{s} bid blind {b.value}, which the {ruleset.preset} rules do not have{have}")
                ok = False
            else:
                if not ruleset.blind_partner_bids and effective[partner] is not None:
                    add(
                        BLIND_BID_NOT_ALLOWED,
                        s,
                        f"{s} bid blind {b.value} after its partner {partner} had bid; only the first partner to speak may bid blind",
                    )
                elif scores_known and not ruleset.blind_bid_score_allowed(own, other):
                    need = ruleset.blind_bids["behind_by"]  # type: ignore[index]
                    add(
                        BLIND_BID_NOT_ALLOWED,
                        s,
                        f"{s} bid blind {b.value}, but {side} may bid blind only when behind by {need} or more "
                        f"({side} {own}, {side.other} {other})",
                    )
        valid[s] = ok
    for s in order:
        if s not in bidders and s not in silent:
            add(BID_MISSING, s, f"{s} has no bid")
    # side limits, only on sides whose bids are all present and valid
    for side in SIDES:
        a, b2 = side.seats
        if not all((valid[x] and effective[x] is not None) or x in silent for x in (a, b2)):
            continue
        bids = [effective[x] for x in (a, b2) if effective[x] is not None]
        has_nil = any(x.nil or x.value == 0 for x in bids)  # type: ignore[union-attr]
        contract = sum(x.value for x in bids if not (x.nil or x.value == 0))  # type: ignore[union-attr]
        if ruleset.min_side_bid is not None and not has_nil and contract < ruleset.min_side_bid:
            add(BID_INVALID, None, f"{side} bid {contract} together; the minimum side bid is {ruleset.min_side_bid}", side)
        if ruleset.max_side_bid is not None and contract > ruleset.max_side_bid:
            add(BID_INVALID, None, f"{side} bid {contract} together; partners may bid at most {ruleset.max_side_bid}", side)
    return tuple(effective)  # type: ignore[return-value]


def _played_once(record: HandRecord) -> tuple[tuple[str, ...], ...]:
    """The deal taken when none is recorded: the cards each seat played, a card played more than
    once counting only for its first play (its later plays are CARD_NOT_HELD)."""
    out: list[list[str]] = [[], [], [], []]
    seen: set[str] = set()
    for t in record.tricks or ():
        for seat, card in zip(t.seats(), t.cards):
            if card not in seen:
                seen.add(card)
                out[seat].append(card)
    return tuple(tuple(c) for c in out)


def _doubtful_cards(tricks: Sequence[Sequence[tuple[Seat, str]]], deal: Sequence[Iterable[str]]) -> frozenset[str]:
    """The cards some seat plays without holding them (the plays that are CARD_NOT_HELD):
    a seat holds what it was dealt and has not played yet; the true holder keeps a card
    another seat played."""
    held = [set(cards) for cards in deal]
    out: set[str] = set()
    for plays in tricks:
        for seat, card in plays:
            if card in held[seat]:
                held[seat].discard(card)
            else:
                out.add(card)
    return frozenset(out)


def _names(seats: Sequence[Seat]) -> str:
    """``"W"``, ``"W and N"``, ``"E, S and W"``."""
    names = [str(s) for s in seats]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _gap_finding(
    record: HandRecord, n: int, missing: tuple[Seat, ...], last: int, taken: tuple[str, ...] | None
) -> Finding:
    """The HAND_INCOMPLETE of a trick missing cards before the hand's last recorded trick
    (RULES.md section 7, "Gaps in the record").  ``taken``: the cards taken from the deal as the
    missing seats' plays (``None``: unknown)."""
    who = _names(missing)
    has = "has" if len(missing) == 1 else "have"
    text = f"{who} {has} no card recorded in this trick, though the hand goes on to trick {last}; "
    if taken is not None:
        if len(missing) == 1:
            s0 = missing[0]
            text += f"{s0}'s one card never played in the hand, {taken[0]}, is taken as its play there"
        else:
            pairs = ", ".join(f"{s} {c}" for s, c in zip(missing, taken))
            text += f"the one card each never played in the hand ({pairs}) is taken as its play there"
    else:
        text += "the trick has no winner and the next trick's leader is not checked"
        if record.taken is None and record.score is not None:
            text += "; with no tricks-taken record, the hand's recorded score is not checked"
    return Finding(
        code=HAND_INCOMPLETE,
        game_id=record.game_id,
        hand=record.hand,
        trick=n,
        seat=missing[0],
        side=missing[0].side,
        message=f"{where(record.hand, n)}: {text}",
    )


def replay_hand(
    record: HandRecord,
    ruleset: Ruleset | Any,
    *,
    score_before: tuple[int, int] | None = None,
    scores_known: bool = True,
    policy: ErrorPolicy | str = ErrorPolicy.COLLECT,
    clean_play: CleanPlay | None = None,
) -> HandReplay:
    """Replay one hand: check its deal, its bidding and every trick (RULES.md sections 1, 3, 4, 7).

    ``ruleset``: a :class:`Ruleset`, or anything :func:`get_ruleset` reads (``"barmore"``, options).
    ``score_before``: the recomputed running totals (NS, EW) before the hand, for the
    blind-bid conditions (default 0-0); ``scores_known=False``: they are not known (a hand
    missing before this one), so conditions on them are not checked.  ``policy``:
    ``"collect"`` returns every finding; ``"raise"`` raises
    :class:`~spadework.analysis.engine.findings.CheckError` at the first.

    Codes raised here: DEAL_INVALID, BID_OUT_OF_TURN, BID_MISSING, BID_INVALID,
    BLIND_BID_NOT_ALLOWED, LEAD_OUT_OF_TURN, CARD_NOT_HELD, SPADE_LED_FIRST_TRICK,
    SPADE_LED_BEFORE_BROKEN, RENEGE, HAND_INCOMPLETE, TRICK_WINNER_MISMATCH,
    TRICKS_TAKEN_MISMATCH (and LEAD_NOT_TWO_OF_CLUBS under that option).
    Where no deal is recorded each seat is taken to have held what it played (a card
    played twice: its first play).  A trick missing cards before the hand's last
    recorded trick is one HAND_INCOMPLETE (section 7, "Gaps in the record"): with a deal
    and exactly one card of a missing seat never played, that card is taken as its play.

    ``clean_play``: what a replay of the same hand that found nothing in its deal or card play gave
    (:class:`CleanPlay`; the compiled core's, when the reference only writes the message text of a
    hand flagged for its bids, tricks-taken record or score): the deal and the tricks are then not
    checked again (the record may leave them out; ``tricks`` is empty); the bids and the tricks-taken
    record are checked as always.  Raises ``ValueError`` for a ``clean_play`` of a hand that is
    incomplete and has no tricks-taken record.
    """
    findings = FindingList(policy)
    if not isinstance(ruleset, Ruleset):
        ruleset = get_ruleset(ruleset)  # a preset name or options, as check_game takes them
    gid, h = record.game_id, record.hand
    if score_before is None:
        score_before = (0, 0)
    if clean_play is not None and not clean_play.complete and record.taken is None:
        raise ValueError(f"game {gid}, {where(h)}: a clean play of an incomplete hand needs its tricks-taken record")
    if record.deal is not None and clean_play is None:
        _check_deal(record, ruleset, findings)
    bids = _check_bids(record, ruleset, score_before, findings, scores_known)

    tricks_rec = record.tricks or ()
    state: PlayState | None = None
    # the plays of each trick as (seat, card), with any card taken from the deal for a gap
    plays: list[list[tuple[Seat, str]]] = [list(zip(t.seats(), t.cards)) for t in tricks_rec]
    last = max((n for n, t in enumerate(tricks_rec, 1) if t.cards), default=0)
    gaps: dict[int, tuple[tuple[Seat, ...], tuple[str, ...] | None]] = {}
    if clean_play is not None:
        replayed, complete = clean_play
    elif tricks_rec:
        inferred = record.deal is None
        deal = _played_once(record) if inferred else record.deal
        played_all = {c for t in tricks_rec for c in t.cards}
        for n, t in enumerate(tricks_rec[: max(last - 1, 0)], 1):  # (no card anywhere: no gap, not [:-1])
            if len(t.cards) >= 4:
                continue
            missing = t.leader.clockwise()[len(t.cards) :]
            fill: tuple[str, ...] | None = None
            if not inferred:
                never = [[c for c in deal[s] if c not in played_all] for s in missing]  # type: ignore[index]
                if all(len(c) == 1 for c in never):
                    fill = tuple(c[0] for c in never)
                    plays[n - 1].extend(zip(missing, fill))
            gaps[n] = (missing, fill)
        future: dict[str, list[tuple[int, Seat]]] = {}
        for n, tp in enumerate(plays, 1):
            for seat, card in tp:
                future.setdefault(card, []).append((n, seat))
        if inferred:
            # without a deal, the 2C holder is the seat that played it first (a second play of it
            # is CARD_NOT_HELD and says nothing about who held it)
            first_2c = future.get(TWO_OF_CLUBS)
            leader = first_leader(record.dealer, ruleset, [[TWO_OF_CLUBS] if first_2c and first_2c[0][1] == s else [] for s in SEATS])
        else:
            leader = first_leader(record.dealer, ruleset, deal, tricks_rec[0].leader)
        if ruleset.first_lead == "two_of_clubs" and (
            TWO_OF_CLUBS in future if inferred else any(TWO_OF_CLUBS in cards for cards in deal)  # type: ignore[union-attr]
        ):
            reason = "holds the 2C"
        else:
            reason = f"sits left of the dealer {record.dealer}"
        state = PlayState.start(
            deal,  # type: ignore[arg-type]
            leader,
            ruleset,
            game_id=gid,
            hand=h,
            hands_inferred=inferred,
            findings=findings,
            future=future,
            first_lead_reason=reason,
            doubtful=_doubtful_cards(plays, deal),  # type: ignore[arg-type]
        )
        deck = ruleset.deck
        for n, (t, tp) in enumerate(zip(tricks_rec, plays), 1):
            if n in gaps:
                missing, fill = gaps[n]
                findings.append(_gap_finding(record, n, missing, last, fill))
            for i, (seat, card) in enumerate(tp):
                if inferred and card not in deck:
                    findings.append(
                        Finding(
                            code=DEAL_INVALID,
                            game_id=gid,
                            hand=h,
                            trick=n,
                            seat=seat,
                            card=card,
                            side=seat.side,
                            message=f"{where(h, n)}: {seat} played {card}, which is not in the {ruleset.preset} deck",
                        )
                    )
                state.play(card, seat if i == 0 else None, from_deal=i >= len(t.cards))
            if len(tp) < 4:
                state.abandon_trick(t.leader, gaps[n][0] if n in gaps else ())
                continue
            done = state.completed[-1]
            if t.winner is not None and t.winner != done.winner:
                findings.append(
                    Finding(
                        code=TRICK_WINNER_MISMATCH,
                        game_id=gid,
                        hand=h,
                        trick=n,
                        seat=t.winner,
                        side=t.winner.side,
                        message=f"{where(h, n)}: winner recorded as {t.winner}, but {done.winner} won it "
                        f"with {tp[done.seats().index(done.winner)][1]}",  # type: ignore[arg-type]
                        field="winner",
                        recorded=str(t.winner),
                        expected=str(done.winner),
                    )
                )
    if clean_play is None:
        replayed = state.taken if state is not None else (0, 0, 0, 0)
        complete = state is not None and len(plays) == 13 and all(len(tp) == 4 for tp in plays)

    taken_rec = record.taken
    # what is missing beyond the gaps already named: tricks never recorded, short tricks at the end
    ends_short = [n for n, tp in enumerate(plays, 1) if len(tp) < 4 and n not in gaps]
    if not complete and taken_rec is None and (not tricks_rec or len(tricks_rec) < 13 or ends_short):
        if not tricks_rec:
            what = "no card play"
        else:
            parts = []
            if len(tricks_rec) < 13:
                parts.append(f"only {len(tricks_rec)} of 13 tricks")
            if ends_short:
                parts.append(
                    "trick " + ", ".join(map(str, ends_short)) + (" has" if len(ends_short) == 1 else " have") + " fewer than 4 cards"
                )
            what = " and ".join(parts)
        # one short trick at the end: the finding names it and the first seat with no card there
        short = ends_short[0] if len(ends_short) == 1 else None
        seat = tricks_rec[short - 1].leader.clockwise()[len(plays[short - 1])] if short else None
        findings.append(
            Finding(
                code=HAND_INCOMPLETE,
                game_id=gid,
                hand=h,
                trick=short,
                seat=seat,
                side=seat.side if seat is not None else None,
                message=f"{where(h)}: {what}, and no tricks-taken record; scored on the tricks played",
            )
        )
    if taken_rec is not None:
        rec_taken = tuple(0 if v is None else v for v in taken_rec)
        # a complete hand must match its play; an incomplete one can only have won more since
        low = []
        for seat in SEATS:
            v, won = taken_rec[seat], replayed[seat]
            if v is None or (v == won if complete else v >= won):
                continue
            low.append(seat)
            if v < 0:  # (a score sheet's typo: there may be no play to compare it with)
                how = "no seat takes fewer than 0"
            else:
                how = f"took {won} in the play" if complete else f"already won {won} in the tricks played"
            findings.append(
                Finding(
                    code=TRICKS_TAKEN_MISMATCH,
                    game_id=gid,
                    hand=h,
                    seat=seat,
                    side=seat.side,
                    message=f"{where(h)}: {seat} recorded as taking {v} tricks, but {how}",
                    field="taken",
                    recorded=v,
                    expected=won,
                )
            )
        total = sum(rec_taken)
        if not low and total != 13:  # RULES.md 7: "or do not add up to 13" (a record leaving a seat out)
            shown = " ".join(f"{s} {'-' if taken_rec[s] is None else taken_rec[s]}" for s in SEATS)
            findings.append(
                Finding(
                    code=TRICKS_TAKEN_MISMATCH,
                    game_id=gid,
                    hand=h,
                    message=f"{where(h)}: tricks taken recorded as {shown}, which add up to {total}, not 13",
                    field="taken",
                    recorded=total,
                    expected=13,
                )
            )
        for_score = replayed if complete else rec_taken
    else:
        for_score = replayed
    reneges = tuple(f.seat for f in findings if f.code == RENEGE and f.seat is not None)
    return HandReplay(
        game_id=gid,
        hand=h,
        tricks=tuple(state.completed) if state is not None else (),
        taken=tuple(replayed),  # type: ignore[arg-type]
        taken_for_score=tuple(for_score),  # type: ignore[arg-type]
        bids=bids,
        findings=list(findings),
        complete=complete,
        reneges=reneges,
        # RULES.md section 7: only a gap whose trick has no winner leaves the tricks each seat took
        # unknown (with no tricks-taken record); a hand that stops early is scored on the tricks
        # played (section 5, item 6), and that score is the true state and is checked
        score_known=complete or taken_rec is not None or all(fill is not None for _, fill in gaps.values()),
    )


__all__ = ["PLAY_CODES", "CleanPlay", "CompletedTrick", "HandReplay", "PlayState", "first_leader", "legal_cards", "replay_hand"]
