"""Compiled double-dummy search over bit masks (numba kernels; RULES.md section 4).

Layout
    A hand is an ``int64`` mask with 16 bits per *playing* suit: bit ``16 * suit + rank``,
    ``suit`` the encoding's suit id (spades 0, the trump suit), ``rank`` 0.. the card's order
    within the suit it plays as (0 lowest).  Jokers and nyc's 2D are spades of high rank.
    Clubs never use bit 63 (at most 13 clubs), so masks stay positive.  The mapping from card
    ids (:mod:`spadework.parsers.encoding`) is built per deck by :mod:`.position`.

Search
    ``_ab`` answers a yes/no question: can NS take at least ``target`` of the tricks left
    (the current trick included)?  It is alpha-beta on a null window, as DDS does, with:

    * a transposition table of positions at the start of a trick, keyed on *relative* ranks
      (for each suit, which seat holds the highest live card, the next, ...), the leader and
      whether spades are broken; an entry keeps a lower and an upper bound on NS's tricks,
      so every target asked of the same position reuses it, and the lead that cut off last;
    * equivalent cards: of the cards a seat holds in sequence (no live card of another seat,
      nor a card of the current trick, between them) only one is searched;
    * quick tricks for the leader (top cards it can cash before an opponent can ruff) and
      "later tricks" for both sides (a seat's spades above every opposing spade each win a
      trick), as cut-offs before any move is tried;
    * move ordering: the table's last best lead, cheapest winning card / lowest card, and a
      history table of moves that cut off.

    ``_nil`` answers the nil question: can the nil seat's side keep it from winning any trick?

Every kernel takes the rule flags in ``flags``: ``flags[0]`` spades may be led any time (from
trick 2), ``flags[1]`` the bit of the 2C when the 2C holder must lead it to trick 1 (else -1).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from spadework.parsers.numba_cache import depends

depends(__file__)  # the cache's places (this module takes no values from others)

# Explicit signatures for the recursive kernels: one specialization each (literal arguments
# would otherwise make several, and numba's cache of recursive specializations is unsafe).
_I = types.int64
_B = types.boolean
_A1 = types.Array(types.int64, 1, "C")
_A2 = types.Array(types.int64, 2, "C")
_A2_8 = types.Array(types.int8, 2, "C")
_SIG_AB = _B(_I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _I, _I, _A2, _A1)
_SIG_EXACT = _I(_A1, _I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _I, _I, _I, _A1, _A2, _A2_8, _A2, _A2, _A2, _A1)
_SIG_AFTER = _I(_A1, _I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _I, _I, _I, _I, _A1, _A2, _A2_8, _A2, _A2, _A2, _A1)
_SIG_SOLVE = types.UniTuple(_I, 2)(
    _A1, _I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _B, _A1, _A2, _A2_8, _A2, _A2, _A2, _A1, _A1, _A1
)
_SIG_NIL = _B(_A1, _I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _I, _I, _A1, _A2, _A2_8, _A2, _A2, _A1)
_SIG_NIL_SAFE = _B(_A1, _I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _I, _A1, _A2, _A2_8, _A2, _A2, _A1)

SUIT_BITS = 16
SPADES = 0

# 16-bit helper tables: highest bit, lowest bit, bit count
_HI16 = np.full(1 << 16, -1, dtype=np.int64)
_POP16 = np.zeros(1 << 16, dtype=np.int64)
for _v in range(1, 1 << 16):
    _HI16[_v] = _v.bit_length() - 1
    _POP16[_v] = _POP16[_v >> 1] + (_v & 1)
HI16 = _HI16
POP16 = _POP16
del _v
# PEXT8[m << 8 | x]: the bits of ``x`` at the set bits of ``m``, packed low (a software
# ``pext`` on bytes; two lookups make a 16-bit one, see ``_pext16``)
_x = np.arange(256, dtype=np.int64)
_PEXT8 = np.zeros(1 << 16, dtype=np.int64)
for _m in range(256):
    _acc = np.zeros(256, dtype=np.int64)
    _j = 0
    for _b in range(8):
        if (_m >> _b) & 1:
            _acc |= ((_x >> _b) & 1) << _j
            _j += 1
    _PEXT8[_m << 8: (_m << 8) + 256] = _acc
PEXT8 = _PEXT8
del _x, _m, _acc, _j, _b

TT_BITS_DEFAULT = 22
MAX_PLY = 64
MAX_MOVES = 20

# TT value columns
LB, UB, TL, BEST = 0, 1, 2, 3


def new_tables(tt_bits: int = TT_BITS_DEFAULT):
    """Fresh search tables: ``(pt, spare, hist, mv, sc, stats)``.

    ``pt`` int64[6, 2**bits]: the partition table, one row per field so a bucket scan reads
    contiguous memory (buckets of ``PT_WAYS`` entries: suit lengths, meta
    = leader | broken << 2 | 8 | lb << 8 | ub << 16 | tricks left << 24 | best lead + 1 << 32,
    two masks over the relative-rank key and the masked key; a zero length word is empty);
    ``spare`` int8[2**bits, 4] (unused by the trick search); ``hist`` int64[4, 64] history
    scores; ``mv``/``sc`` move buffers per ply; ``stats``: nodes, table hits, quick cut-offs,
    trick starts, moves tried at cut-off nodes, cut-off nodes, the same two at leads, then from
    ``REL`` the relevant cards of each depth's last answer, and from ``WS_HIST`` the workspace
    that ``hist``, ``mv`` and ``sc`` are views of (``_ab`` takes only ``stats`` and finds them
    there).
    """
    n = 1 << tt_bits
    ws = np.zeros(WS_SIZE, dtype=np.int64)
    return (
        np.zeros((6, n), dtype=np.int64),
        np.zeros((1, 4), dtype=np.int8),
        ws[WS_HIST:WS_HIST + 4 * 64].reshape(4, 64),
        ws[WS_MV:WS_MV + MAX_PLY * MAX_MOVES].reshape(MAX_PLY, MAX_MOVES),
        ws[WS_SC:WS_SC + MAX_PLY * MAX_MOVES].reshape(MAX_PLY, MAX_MOVES),
        ws,
    )


@njit(cache=True, _nrt=False, inline="always")
def _suit(m, s):
    return (m >> (SUIT_BITS * s)) & 0xFFFF


@njit(cache=True, _nrt=False)
def _popcount(m):
    return POP16[m & 0xFFFF] + POP16[(m >> 16) & 0xFFFF] + POP16[(m >> 32) & 0xFFFF] + POP16[(m >> 48) & 0xFFFF]


@njit(cache=True, _nrt=False)
def legal_mask(hand, k, led, broken, first, flags):
    """The cards of ``hand`` that may be played: following (``k`` > 0) the suit ``led`` if held,
    else anything; leading, RULES.md section 4 (trick 1: the 2C when the rule says so, no spade
    unless only spades; later, no spade before spades are broken unless only spades)."""
    if k > 0:
        f = hand & (0xFFFF << (SUIT_BITS * led))
        return f if f != 0 else hand
    if first:
        tc = flags[1]
        if tc >= 0 and (hand >> tc) & 1:
            return 1 << tc
    elif broken or flags[0]:
        return hand
    ns = hand & ~0xFFFF
    return ns if ns != 0 else hand


@njit(cache=True, _nrt=False, inline="always")
def _pext16(x, m):
    """The bits of ``x`` (16-bit) at the set bits of ``m``, packed low."""
    lo = PEXT8[((m & 0xFF) << 8) | (x & 0xFF)]
    hi = PEXT8[(m & 0xFF00) | ((x >> 8) & 0xFF)]
    return lo | (hi << POP16[m & 0xFF])


@njit(cache=True, _nrt=False)
def _key(h, leader, broken):
    """Relative-rank key of a trick-start position: three int64 words.

    Per suit (32 bits: spades low in ``w0``, hearts high, diamonds low in ``w1``, clubs high)
    two planes of the owners of the suit's live cards packed in rank order (lowest live card at
    bit 0): bits 0..15 say the card is held by E or W, bits 16..31 by S or W (N: neither).
    ``w2`` holds the leader, spades broken and the live count per suit, so with the counts
    fixed the top ``r`` live cards of a suit of ``n`` are bits ``n - r .. n - 1`` of each plane.
    """
    h1, h2, h3 = h[1], h[2], h[3]
    al = h[0] | h1 | h2 | h3
    p1 = h1 | h3
    p2 = h2 | h3
    w2 = leader | (broken << 2) | (1 << 40)
    w0 = 0
    w1 = 0
    for s in range(4):
        live = _suit(al, s)
        seq = _pext16(_suit(p1, s), live) | (_pext16(_suit(p2, s), live) << 16)
        if s == 0:
            w0 = seq
        elif s == 1:
            w0 |= seq << 32
        elif s == 2:
            w1 = seq
        else:
            w1 |= seq << 32
        w2 |= POP16[live] << (8 + 5 * s)
    return w0, w1, w2


@njit(cache=True, _nrt=False)
def _slot(tt_keys, w0, w1, w2):
    """Index of the entry for a key (found or to fill), 4-way buckets; -1-free."""
    hsh = (w0 * -7046029254386353131) ^ (w1 * -4658895280553007687) ^ (w2 * 7640891576956012809)
    hsh ^= hsh >> 29
    mask = tt_keys.shape[0] - 1
    base = hsh & mask & ~3
    for i in range(4):
        j = base + i
        if tt_keys[j, 0] == w0 and tt_keys[j, 1] == w1 and tt_keys[j, 2] == w2:
            return j, True
    # choose a victim: an empty slot, else one picked by the hash
    for i in range(4):
        j = base + i
        if tt_keys[j, 2] == 0:
            return j, False
    return base + ((hsh >> 40) & 3), False


@njit(cache=True, _nrt=False)
def _rel_to_card(h, best):
    """A stored best lead (suit * 16 + place from the top among live cards) -> card bit, or -1."""
    if best < 0:
        return -1
    s = best >> 4
    place = best & 15
    live = _suit(h[0] | h[1] | h[2] | h[3], s)
    while live:
        b = HI16[live]
        if place == 0:
            return b + SUIT_BITS * s
        place -= 1
        live ^= 1 << b
    return -1


@njit(cache=True, _nrt=False)
def _card_to_rel(h, c):
    s = c >> 4
    live = _suit(h[0] | h[1] | h[2] | h[3], s)
    r = c & 15
    above = live >> (r + 1)
    return s * 16 + POP16[above & 0xFFFF]


@njit(cache=True, _nrt=False)
def _quick_tricks(h, L, can_trump):
    """Tricks the leader ``L`` can cash at once, keeping the lead: its cards above every other
    live card of their suit (partner's too, so partner is never forced to overtake).  Spades
    count when ``L`` may lead them.  In another suit they are limited by the length of each
    opponent that holds a spade (it must follow that many times, then may ruff), and, when
    partner keeps a spade after the spade leads, by partner's cards outside spades (partner
    must never be left with only spades, which would ruff and take the lead)."""
    P = (L + 2) & 3
    o1 = (L + 1) & 3
    o2 = (L + 3) & 3
    HL = h[L]
    HP = h[P]
    H1 = h[o1]
    H2 = h[o2]
    sp1 = _suit(H1, 0)
    sp2 = _suit(H2, 0)
    spp = _suit(HP, 0)
    kt = 0
    if can_trump:
        mine = _suit(HL, 0)
        other = sp1 | sp2 | spp
        if other == 0:
            kt = POP16[mine]
        else:
            kt = POP16[(mine >> (HI16[other] + 1)) & 0xFFFF]
    side = 0
    for s in range(1, 4):
        mine = _suit(HL, s)
        if mine == 0:
            continue
        a = _suit(H1, s)
        b = _suit(H2, s)
        other = a | b | _suit(HP, s)
        if other == 0:
            m = POP16[mine]
        else:
            m = POP16[(mine >> (HI16[other] + 1)) & 0xFFFF]
        if m == 0:
            continue
        if sp1 != 0:
            la = POP16[a]
            if la < m:
                m = la
        if sp2 != 0:
            lb = POP16[b]
            if lb < m:
                m = lb
        side += m
    if spp != 0 and POP16[spp] > kt:
        rest = _popcount(HP & ~0xFFFF)
        if side > rest:
            side = rest
    best = kt + side
    # or: lead a small card to partner's top cards of a suit and let partner cash them
    for s in range(4):
        if s == 0 and not can_trump:
            continue
        mine = _suit(HL, s)
        hp = _suit(HP, s)
        if mine == 0 or hp == 0:
            continue
        a = _suit(H1, s)
        b = _suit(H2, s)
        other = a | b | mine
        m = POP16[(hp >> (HI16[other] + 1)) & 0xFFFF]
        if m == 0:
            continue
        lm = POP16[mine]
        if lm < m:
            m = lm
        if s != 0:
            if sp1 != 0 and POP16[a] < m:
                m = POP16[a]
            if sp2 != 0 and POP16[b] < m:
                m = POP16[b]
        if m > best:
            best = m
    return best


@njit(cache=True, _nrt=False)
def _sure_trumps(h, side):
    """Tricks ``side`` (0 NS, 1 EW) wins for certain: the most spades one of its seats holds
    above every opposing spade (each wins the trick it is played to)."""
    a = side
    b = side + 2
    opp = _suit(h[(side + 1) & 3], 0) | _suit(h[(side + 3) & 3], 0)
    ma = _suit(h[a], 0)
    mb = _suit(h[b], 0)
    if opp != 0:
        t = HI16[opp] + 1
        ma = (ma >> t) & 0xFFFF
        mb = (mb >> t) & 0xFFFF
    ca = POP16[ma]
    cb = POP16[mb]
    return ca if ca > cb else cb


@njit(cache=True, _nrt=False, inline="always")
def _skip_group(live, mine, b, ls):
    """``ls`` without the cards of ``mine`` equivalent to ``b`` below it (no live card of
    another seat, nor a card of the current trick, between them)."""
    below = live & ((1 << b) - 1)
    while below:
        x = HI16[below]
        if not (mine >> x) & 1:
            break
        ls &= ~(1 << x)
        below ^= 1 << x
    return ls


@njit(cache=True, _nrt=False)
def _beaten_by(h, o, wsuit, wrank, led):
    """Can seat ``o``, still to play, beat the card (``wsuit``, ``wrank``) winning the trick?"""
    oled = _suit(h[o], led)
    if oled != 0:
        return wsuit == led and HI16[oled] > wrank
    osp = _suit(h[o], 0)
    if osp == 0:
        return False
    if wsuit == 0:
        return HI16[osp] > wrank
    return True


@njit(cache=True, _nrt=False)
def _gen(h, seat, L, tmask, mv, d, sc, k, led, wseat, wsuit, wrank, hist, hint):
    """Fill ``mv[d]`` with one card per group of equivalent legal cards, ``sc[d]`` with an
    ordering score, sorted best first.  Returns the number of moves.

    Ordering (highest score first): the table's last best lead; leads that cash a top card,
    reach partner's top card, give partner a ruff or draw trumps while holding the top one,
    then low leads; following, a card that wins the trick and cannot be beaten by the
    opponent still to play (cheapest first), then low cards; history breaks ties."""
    live_all = h[0] | h[1] | h[2] | h[3] | tmask
    H = h[seat]
    n = 0
    side = seat & 1
    P = (seat + 2) & 3
    nxt = (seat + 1) & 3
    rho = (seat + 3) & 3
    partner_wins = k > 0 and (wseat & 1) == side
    # is partner's winning card safe from the opponent still to play?
    partner_safe = True
    if partner_wins and k < 3:
        partner_safe = not _beaten_by(h, nxt, wsuit, wrank, led)
    for s in range(4):
        ls = _suit(L, s)
        if ls == 0:
            continue
        base = SUIT_BITS * s
        live = _suit(live_all, s)
        mine = _suit(H, s)
        others = live & ~mine
        hp = _suit(h[P], s)
        opp = _suit(h[nxt], s) | _suit(h[rho], s)
        while ls:
            b = HI16[ls]
            ls ^= 1 << b
            # b is the top of its group; skip the lower cards of the group (remembering the
            # lowest: a search that tries every move rests on the group, see ``_ab``)
            low = b
            below = live & ((1 << b) - 1)
            while below:
                x = HI16[below]
                if not (mine >> x) & 1:
                    break
                ls &= ~(1 << x)
                low = x
                below ^= 1 << x
            c = base + b
            mv[d, n] = c | ((base + low) << 8)
            score = hist[seat, c]
            low = (16 - b) << 34
            if k == 0:
                if c == hint:
                    score += 1 << 50
                top = (others >> (b + 1)) == 0
                ruffable = s != 0 and (
                    (_suit(h[nxt], s) == 0 and _suit(h[nxt], 0) != 0) or (_suit(h[rho], s) == 0 and _suit(h[rho], 0) != 0)
                )
                if top and not ruffable:
                    score += (6 << 40) + (b << 34)
                elif hp != 0 and opp != 0 and HI16[hp] > HI16[opp] and not ruffable:
                    score += (5 << 40) + low
                elif s != 0 and hp == 0 and _suit(h[P], 0) != 0 and opp != 0:
                    score += (4 << 40) + low
                elif s == 0 and (HI16[hp | mine] > HI16[opp] if opp != 0 else True):
                    score += (3 << 40) + low
                elif ruffable:
                    score += low
                else:
                    score += (2 << 40) + low
            else:
                beats = (s == wsuit and b > wrank) or (s == 0 and wsuit != 0)
                safe = beats and (k == 3 or not _beaten_by(h, nxt, s if beats else wsuit, b, led))
                if partner_wins and partner_safe:
                    score += low
                    if beats:
                        score -= 1 << 33
                elif safe:
                    score += (6 << 40) + low
                elif beats and k == 2:
                    score += (4 << 40) + low
                elif beats:
                    score += (2 << 40) + low
                else:
                    score += (3 << 40) + low
            sc[d, n] = score
            n += 1
    # insertion sort, best first
    if n < 2:
        return n
    for i in range(1, n):
        m = mv[d, i]
        v = sc[d, i]
        j = i - 1
        while j >= 0 and sc[d, j] < v:
            mv[d, j + 1] = mv[d, j]
            sc[d, j + 1] = sc[d, j]
            j -= 1
        mv[d, j + 1] = m
        sc[d, j + 1] = v
    return n


@njit(cache=True, _nrt=False)
def _last_trick_ns(h, leader):
    """NS tricks (0 or 1) of the last trick, each seat holding one card."""
    c = HI16_64(h[leader])
    wsuit = c >> 4
    wrank = c & 15
    wseat = leader
    for i in range(1, 4):
        seat = (leader + i) & 3
        x = HI16_64(h[seat])
        s = x >> 4
        r = x & 15
        if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
            wsuit = s
            wrank = r
            wseat = seat
    return 1 if (wseat & 1) == 0 else 0


@njit(cache=True, _nrt=False)
def HI16_64(m):
    """Highest set bit of a non-zero 64-bit mask."""
    for s in range(3, -1, -1):
        x = (m >> (SUIT_BITS * s)) & 0xFFFF
        if x:
            return HI16[x] + SUIT_BITS * s
    return -1


@njit(cache=True, _nrt=False)
def _last_trick_winner(h, leader):
    c = HI16_64(h[leader])
    wsuit = c >> 4
    wrank = c & 15
    wseat = leader
    for i in range(1, 4):
        seat = (leader + i) & 3
        x = HI16_64(h[seat])
        s = x >> 4
        r = x & 15
        if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
            wsuit = s
            wrank = r
            wseat = seat
    return wseat


@njit(cache=True, _nrt=False)
def _lenkey(h):
    """The suit lengths of every hand, 4 bits each (suit-major): the partition table's key."""
    x = 0
    for s in range(4):
        for p in range(4):
            x |= POP16[_suit(h[p], s)] << (16 * s + 4 * p)
    return x


@njit(cache=True, _nrt=False)
def _prefix_masks(h, rel):
    """Masks over the relative-rank key words (see ``_key``) that keep, in each suit, the
    owners of the live cards down to the lowest relevant card of ``rel``: ``(m0, m1)``."""
    al = h[0] | h[1] | h[2] | h[3]
    m0 = 0
    m1 = 0
    for s in range(4):
        live = _suit(al, s)
        n = POP16[live]
        r = MIN_PREFIX if n > MIN_PREFIX else n
        rb = _suit(rel, s) & live
        if rb != 0:
            low = HI16[rb & -rb]
            rr = POP16[live >> low]
            if rr > r:
                r = rr
        m = ((1 << n) - 1) ^ ((1 << (n - r)) - 1)
        m |= m << 16
        if s == 0:
            m0 |= m
        elif s == 1:
            m0 |= m << 32
        elif s == 2:
            m1 |= m
        else:
            m1 |= m << 32
    return m0, m1


@njit(cache=True, _nrt=False)
def _masks_rel(h, m0, m1):
    """The live cards (absolute bits) a stored entry's masks cover: the top cards of each suit."""
    al = h[0] | h[1] | h[2] | h[3]
    rel = 0
    for s in range(4):
        if s == 0:
            m = m0 & 0xFFFF
        elif s == 1:
            m = (m0 >> 32) & 0xFFFF
        elif s == 2:
            m = m1 & 0xFFFF
        else:
            m = (m1 >> 32) & 0xFFFF
        if m == 0:
            continue
        live = _suit(al, s)
        # drop the live cards below the covered ones (the lowest n - r)
        drop = POP16[live] - POP16[m]
        while drop > 0:
            live &= live - 1
            drop -= 1
        rel |= live << (SUIT_BITS * s)
    return rel


# partition table: int64[n, 6] in buckets of 8; columns
PT_LEN, PT_META, PT_M0, PT_M1, PT_V0, PT_V1 = 0, 1, 2, 3, 4, 5
PT_WAYS = 256
MIN_PREFIX = 0
"""Every stored entry keeps at least the owners of the top ``MIN_PREFIX`` cards of each suit, and
the bucket hash includes them.  0 measured best: the entries of one length pattern share a large
bucket (``PT_WAYS``), so an entry can match positions that differ even in their top cards (a
fail proof on one deal: 39M nodes with 1 and 64 ways, 7.5M with 0 and 256 ways)."""
REL = 8
"""``stats[REL + d]``: the relevant cards (absolute bits) of the last answer at depth ``d``."""
CLOCK = REL + MAX_PLY + 2
"""``stats[CLOCK]``: the table's clock (stores so far), for least-recently-used eviction."""
WS_HIST = CLOCK + 1
WS_MV = WS_HIST + 4 * 64
WS_SC = WS_MV + MAX_PLY * MAX_MOVES
WS_H = WS_SC + MAX_PLY * MAX_MOVES
WS_FLAGS = WS_H + 4
WS_SIZE = WS_FLAGS + 2


@njit(cache=True, _nrt=False, inline="always")
def _load_ws(h, flags, stats):
    """Copy the hands and rule flags where ``_ab`` reads them (and changes and restores the hands)."""
    for i in range(4):
        stats[WS_H + i] = h[i]
    stats[WS_FLAGS] = flags[0]
    stats[WS_FLAGS + 1] = flags[1]
STAMP_SHIFT = 40
STAMP_MASK = (1 << 23) - 1
STAMP_LOW = (1 << STAMP_SHIFT) - 1


@njit(cache=True, _nrt=False)
def _min_masks(h):
    """Masks of the top ``MIN_PREFIX`` cards of each suit over the relative-rank key."""
    return _prefix_masks(h, 0)


@njit(cache=True, _nrt=False)
def _pt_bucket(pt, lenkey, kmeta, t0, t1):
    hsh = (lenkey * -7046029254386353131) ^ (kmeta * 7640891576956012809) ^ (t0 * -4658895280553007687) ^ (t1 * 6364136223846793005)
    hsh ^= hsh >> 31
    nb = pt.shape[1] // PT_WAYS
    return (hsh & (nb - 1)) * PT_WAYS


@njit(cache=True, _nrt=False, inline="always")
def _pt_swap(pt, a, b):
    """Swap two entries of the partition table (every row)."""
    for r in range(6):
        x = pt[r, a]
        pt[r, a] = pt[r, b]
        pt[r, b] = x


@njit(cache=True, _nrt=False)
def _pt_store(pt, base, lenkey, kmeta, m0, m1, w0, w1, tl, ok, target, best, stats):
    """Store (or tighten) an entry; when the bucket is full, evict its least recently used
    entry (a full bucket used to overwrite its first slot forever, freezing the rest)."""
    v0 = w0 & m0
    v1 = w1 & m1
    now = stats[CLOCK] + 1
    stats[CLOCK] = now
    stamp = (now & STAMP_MASK) << STAMP_SHIFT
    victim = -1
    for i in range(PT_WAYS):
        j = np.uint64(base + i)
        ln = pt[PT_LEN, j]
        if ln == 0:
            # entries fill a bucket from the front (an entry is only emptied with the whole
            # table, and a hit moves toward the front only among filled slots): the first
            # empty slot ends the scan
            victim = base + i
            break
        # the masks first: they tell most entries of a bucket apart
        if (pt[PT_M0, j] == m0 and pt[PT_V0, j] == v0 and pt[PT_M1, j] == m1 and pt[PT_V1, j] == v1
                and ln == lenkey and (pt[PT_META, j] & 0xFF) == kmeta):
            meta = pt[PT_META, j]
            lb = (meta >> 8) & 0xFF
            ub = (meta >> 16) & 0xFF
            if ok:
                if target > lb:
                    lb = target
            else:
                if target - 1 < ub:
                    ub = target - 1
            meta = (meta & 0xFF) | (lb << 8) | (ub << 16) | (tl << 24) | (best << 32) | stamp
            pt[PT_META, j] = meta
            return
    if victim < 0:
        # a full bucket: the least recently used entry goes
        vage = -1
        for i in range(PT_WAYS):
            j = np.uint64(base + i)
            age = (now - (pt[PT_META, j] >> STAMP_SHIFT)) & STAMP_MASK
            if age > vage:
                victim = base + i
                vage = age
    lb = 0
    ub = tl
    if ok:
        lb = target
    else:
        ub = target - 1
    pt[PT_LEN, victim] = lenkey
    pt[PT_META, victim] = kmeta | (lb << 8) | (ub << 16) | (tl << 24) | (best << 32) | stamp
    pt[PT_M0, victim] = m0
    pt[PT_M1, victim] = m1
    pt[PT_V0, victim] = v0
    pt[PT_V1, victim] = v1


@njit(cache=True, _nrt=False)
def _last_trick_rel(h, leader):
    """``(ns, rel)`` of the last trick: NS's trick (0 or 1) and the winning card when it won by
    rank (another card of its suit in the trick)."""
    c = HI16_64(h[leader])
    wsuit = c >> 4
    wrank = c & 15
    wseat = leader
    allc = h[0] | h[1] | h[2] | h[3]
    for i in range(1, 4):
        seat = (leader + i) & 3
        x = HI16_64(h[seat])
        s = x >> 4
        r = x & 15
        if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
            wsuit = s
            wrank = r
            wseat = seat
    rel = 0
    if _suit(allc, wsuit) & ~(1 << wrank):
        rel = 1 << (SUIT_BITS * wsuit + wrank)
    return (1 if (wseat & 1) == 0 else 0), rel


@njit(cache=True, _nrt=False)
def _top_above(h, s, lim_mask):
    """All live cards of suit ``s`` above the highest card of ``lim_mask`` (a 16-bit suit mask;
    all live cards when it is empty), as absolute bits."""
    live = _suit(h[0] | h[1] | h[2] | h[3], s)
    if lim_mask != 0:
        live = (live >> (HI16[lim_mask] + 1)) << (HI16[lim_mask] + 1)
    return live << (SUIT_BITS * s)


@njit(cache=True, _nrt=False)
def _qt_rel(h, L, can_trump):
    """The cards a quick-trick count of ``L`` rests on: in each suit, the live cards above every
    card of the other three seats."""
    rel = 0
    for s in range(4):
        if s == 0 and not can_trump:
            continue
        other = 0
        for p in range(4):
            if p != L:
                other |= _suit(h[p], s)
        mine = _suit(h[L], s)
        if mine == 0:
            continue
        rel |= _top_above(h, s, other)
        # partner's top cards (the lead-to-partner count)
        P = (L + 2) & 3
        rel |= _top_above(h, s, _suit(h[(L + 1) & 3], s) | _suit(h[(L + 3) & 3], s) | mine)
    return rel


@njit(cache=True, _nrt=False)
def _group_rel(mv, d, n, rel):
    """The relevant cards of a node where every move was tried, widened for equivalent cards:
    a move stood for its group (the mover's cards down to ``mv >> 8`` with no other live card
    between), which rests on who holds the cards of the group.  When the group's top is among
    the relevant cards of its suit (at or above the lowest) and the group reaches below them,
    its lowest card becomes relevant (else a position that matches the stored entry could split
    the group: a card there played as a small card would win by rank)."""
    changed = True
    while changed:
        changed = False
        for i in range(n):
            m = mv[d, i]
            c = m & 0xFF
            low = m >> 8
            if low == c:
                continue
            s = c >> 4
            rs = _suit(rel, s)
            if rs == 0:
                continue
            lowest = HI16[rs & -rs] + SUIT_BITS * s
            if c >= lowest and low < lowest:
                rel |= 1 << low
                changed = True
    return rel


@njit(_SIG_AB, cache=True, _nrt=False)
def _ab(leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, target, d, pt, stats):
    """Can NS take at least ``target`` of the ``tl`` tricks left (the current one included)?

    ``h`` int64[4] hands (changed and restored); ``leader`` of the current trick; ``k`` cards
    played to it; ``led`` its suit; ``wseat``/``wsuit``/``wrank`` the card winning it so far;
    ``tmask`` its cards; ``broken`` spades broken (a spade played before, this trick included:
    only read at a lead, when it means an earlier trick); ``first`` this is trick 1.

    Partition search (Ginsberg; DDS's "winning ranks"): each answer comes with the cards whose
    ranks it rests on (``stats[REL + d]``): the cards that won a trick by rank, the top cards a
    quick-trick count used.  A trick-start answer is stored for every position with the same
    suit lengths per hand, leader and spades-broken state in which the same seats hold the
    live cards of each suit down to the lowest such card: the other, lower cards are small
    cards whose ranks never mattered.
    """
    stats[0] += 1
    # the hands, rule flags, history table and move buffers live in ``stats`` (see
    # ``new_tables``; callers load the hands and flags with ``_load_ws``): fewer array
    # arguments to push at every recursive call (numba passes an array as 7 to 9 words)
    h = stats[WS_H:WS_H + 4]
    flags = stats[WS_FLAGS:WS_FLAGS + 2]
    hist = stats[WS_HIST:WS_HIST + 4 * 64].reshape((4, 64))
    mv = stats[WS_MV:WS_MV + MAX_PLY * MAX_MOVES].reshape((MAX_PLY, MAX_MOVES))
    sc = stats[WS_SC:WS_SC + MAX_PLY * MAX_MOVES].reshape((MAX_PLY, MAX_MOVES))
    # typed zeros and False for the recursive calls (a literal argument would make numba
    # type another specialization of this recursive function)
    z = tl & 0
    no = tl < 0
    base = -1
    w0 = 0
    w1 = 0
    lenkey = 0
    kmeta = 0
    hint = -1
    stats[REL + d] = 0
    if k == 0:
        stats[3] += 1
        if target <= 0:
            return True
        if target > tl:
            return False
        if tl == 1:
            nsw, rel = _last_trick_rel(h, leader)
            stats[REL + d] = rel
            return nsw >= target
        if not first:
            bk = broken
            if not bk and (_suit(h[0] | h[1] | h[2] | h[3], 0) == 0):
                bk = True
            if flags[0]:
                bk = True
            # later tricks: sure spades of each side
            opp_ew = _suit(h[1], 0) | _suit(h[3], 0)
            if _sure_trumps(h, 0) >= target:
                stats[2] += 1
                stats[REL + d] = _top_above(h, 0, opp_ew)
                return True
            opp_ns = _suit(h[0], 0) | _suit(h[2], 0)
            if tl - _sure_trumps(h, 1) < target:
                stats[2] += 1
                stats[REL + d] = _top_above(h, 0, opp_ns)
                return False
            # quick tricks of the leader
            H = h[leader]
            can_trump = bk or (H & ~0xFFFF) == 0
            qt = _quick_tricks(h, leader, can_trump)
            if (leader & 1) == 0:
                if qt >= target:
                    stats[2] += 1
                    stats[REL + d] = _qt_rel(h, leader, can_trump)
                    return True
            else:
                if tl - qt < target:
                    stats[2] += 1
                    stats[REL + d] = _qt_rel(h, leader, can_trump)
                    return False
            w0, w1, w2 = _key(h, leader, 1 if bk else 0)
            lenkey = _lenkey(h)
            kmeta = leader | ((1 if bk else 0) << 2) | 8
            mm0, mm1 = _min_masks(h)
            base = _pt_bucket(pt, lenkey, kmeta, w0 & mm0, w1 & mm1)
            for i in range(PT_WAYS):
                j = np.uint64(base + i)  # unsigned: no negative-index test in the hot loop
                ln = pt[PT_LEN, j]
                if ln == 0:
                    break  # the bucket's entries fill it from the front: no entry after this
                # the masks first: entries of one bucket mostly share the suit lengths
                if (w0 & pt[PT_M0, j]) != pt[PT_V0, j] or (w1 & pt[PT_M1, j]) != pt[PT_V1, j] or ln != lenkey:
                    continue
                meta = pt[PT_META, j]
                if (meta & 0xFF) != kmeta:
                    continue
                lb = (meta >> 8) & 0xFF
                ub = (meta >> 16) & 0xFF
                if lb >= target or ub < target:
                    stats[1] += 1
                    stats[REL + d] = _masks_rel(h, pt[PT_M0, j], pt[PT_M1, j])
                    pt[PT_META, j] = (meta & STAMP_LOW) | ((stats[CLOCK] & STAMP_MASK) << STAMP_SHIFT)
                    if i > 0:
                        # move the entry halfway to the front of its bucket: entries that
                        # answer often are found after a shorter scan
                        _pt_swap(pt, j, base + (i >> 1))
                    return lb >= target
                bst = (meta >> 32) & 0xFF
                if bst > 0 and hint < 0:
                    hint = _rel_to_card(h, bst - 1)
    seat = (leader + k) & 3
    maxi = (seat & 1) == 0
    L = legal_mask(h[seat], k, led, broken, first, flags)
    n = _gen(h, seat, L, tmask, mv, d, sc, k, led, wseat, wsuit, wrank, hist, hint)
    result = not maxi
    cut = -1
    relacc = 0
    for i in range(n):
        c = mv[d, i] & 0xFF
        s = c >> 4
        r = c & 15
        bit = 1 << c
        h[seat] ^= bit
        nb = broken or s == 0
        crel = 0
        if k == 0:
            res = _ab(leader, k + 1, s, seat, s, r, bit, nb, first, tl, target, d + 1, pt, stats)
            crel = stats[REL + d + 1]
        else:
            nws = wseat
            nwsu = wsuit
            nwr = wrank
            if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
                nws = seat
                nwsu = s
                nwr = r
            if k == 3:
                nsw = 1 if (nws & 1) == 0 else 0
                res = _ab(nws, z, z, z, z, z, z, nb, no, tl - 1, target - nsw, d + 1, pt, stats)
                crel = stats[REL + d + 1]
                # the trick's winner matters by rank when another card of its suit was played
                if _suit(tmask | bit, nwsu) & ~(1 << nwr):
                    crel |= 1 << (SUIT_BITS * nwsu + nwr)
            else:
                res = _ab(leader, k + 1, led, nws, nwsu, nwr, tmask | bit, nb, first, tl, target, d + 1,
                           pt, stats)
                crel = stats[REL + d + 1]
        h[seat] ^= bit
        if res == maxi:
            result = maxi
            cut = c
            relacc = crel
            hist[seat, c] += tl * tl
            stats[4] += i + 1
            stats[5] += 1
            if k == 0:
                stats[6] += i + 1
                stats[7] += 1
            break
        relacc |= crel
    if cut < 0:
        relacc = _group_rel(mv, d, n, relacc)
    stats[REL + d] = relacc
    if base >= 0:
        m0, m1 = _prefix_masks(h, relacc)
        best = 0
        if cut >= 0:
            best = _card_to_rel(h, cut) + 1
        _pt_store(pt, base, lenkey, kmeta, m0, m1, w0, w1, tl, result, target, best, stats)
    return result


@njit(cache=True)
def _playout(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, flags, hist, mv, sc):
    """NS's tricks when every seat plays the first card of the move ordering (no search): the
    guess the exact search starts from.  ``h`` is restored."""
    hh = h.copy()
    ns = 0
    d = MAX_PLY - 2
    while tl > 0:
        seat = (leader + k) & 3
        L = legal_mask(hh[seat], k, led, broken, first, flags)
        n = _gen(hh, seat, L, tmask, mv, d, sc, k, led, wseat, wsuit, wrank, hist, -1)
        c = mv[d, 0] & 0xFF
        s = c >> 4
        r = c & 15
        hh[seat] ^= 1 << c
        broken = broken or s == 0
        if k == 0:
            led = s
            wseat = seat
            wsuit = s
            wrank = r
            tmask = 1 << c
            k = 1
        else:
            if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
                wseat = seat
                wsuit = s
                wrank = r
            tmask |= 1 << c
            k += 1
            if k == 4:
                if (wseat & 1) == 0:
                    ns += 1
                leader = wseat
                k = 0
                tmask = 0
                first = False
                tl -= 1
        if n == 0:
            break
    return ns


@njit(_SIG_EXACT, cache=True, _nrt=False)
def _exact(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, guess, lo, hi, flags,
           tt_keys, tt_vals, hist, mv, sc, stats):
    """NS's tricks of the ``tl`` left (current trick included) with best play, known to lie in
    ``lo..hi``: a run of null-window searches from ``guess`` up or down."""
    if lo < 0:
        lo = 0
    if hi > tl:
        hi = tl
    t = guess
    if t < 1:
        t = 1
    if t > tl:
        t = tl
    while lo < hi:
        if guess < 0:
            t = (lo + hi + 1) // 2
        if t <= lo:
            t = lo + 1
        if t > hi:
            t = hi
        _load_ws(h, flags, stats)
        if _ab(leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, t, tl & 0, tt_keys, stats):
            lo = t
            t = t + 1
        else:
            hi = t - 1
            t = t - 1
    return lo


@njit(_SIG_AFTER, cache=True, _nrt=False)
def _after_card(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, c, guess, lo, hi, flags,
                tt_keys, tt_vals, hist, mv, sc, stats):
    """NS's tricks of the ``tl`` left when the seat to play plays card bit ``c`` now and all
    play best after it, known to lie in ``lo..hi`` (the parent's value bounds every child's:
    at most it when NS play, at least it when EW play)."""
    seat = (leader + k) & 3
    s = c >> 4
    r = c & 15
    bit = 1 << c
    h[seat] ^= bit
    nb = broken or s == 0
    if k == 0:
        v = _exact(h, leader, k + 1, s, seat, s, r, bit, nb, first, tl, guess, lo, hi, flags,
                   tt_keys, tt_vals, hist, mv, sc, stats)
    else:
        nws = wseat
        nwsu = wsuit
        nwr = wrank
        if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
            nws = seat
            nwsu = s
            nwr = r
        if k == 3:
            nsw = 1 if (nws & 1) == 0 else 0
            if tl == 1:
                v = nsw
            else:
                z = tl & 0
                v = nsw + _exact(h, nws, z, z, z, z, z, z, nb, tl < 0, tl - 1, guess - nsw, lo - nsw, hi - nsw,
                                 flags, tt_keys, tt_vals, hist, mv, sc, stats)
        else:
            v = _exact(h, leader, k + 1, led, nws, nwsu, nwr, tmask | bit, nb, first, tl, guess, lo, hi, flags,
                       tt_keys, tt_vals, hist, mv, sc, stats)
    h[seat] ^= bit
    return v


@njit(_SIG_SOLVE, cache=True)
def solve_position(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, want_cards, flags,
                   tt_keys, tt_vals, hist, mv, sc, stats, out_cards, out_vals):
    """Solve a position: returns NS's tricks (current trick included) and, when ``want_cards``,
    fills ``out_cards``/``out_vals`` with one card bit per group of equivalent legal cards of
    the seat to play and NS's tricks after it (count returned second)."""
    guess = _playout(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, flags, hist, mv, sc)
    ns = _exact(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, guess, 0, tl, flags,
                tt_keys, tt_vals, hist, mv, sc, stats)
    if not want_cards:
        return ns, 0
    seat = (leader + k) & 3
    maxi = (seat & 1) == 0
    L = legal_mask(h[seat], k, led, broken, first, flags)
    n = _gen(h, seat, L, tmask, mv, MAX_PLY - 1, sc, k, led, wseat, wsuit, wrank, hist, -1)
    cards = mv[MAX_PLY - 1, :n] & 0xFF
    for i in range(n):
        out_cards[i] = cards[i]
        lo = 0 if maxi else ns
        hi = ns if maxi else tl
        out_vals[i] = _after_card(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, cards[i], ns,
                                  lo, hi, flags, tt_keys, tt_vals, hist, mv, sc, stats)
    return ns, n


# --- nil -----------------------------------------------------------------------------------------


@njit(cache=True, _nrt=False)
def _gen_nil(h, seat, nil, L, tmask, mv, d, sc, k, wseat, wsuit, wrank):
    live_all = h[0] | h[1] | h[2] | h[3] | tmask
    H = h[seat]
    n = 0
    for s in range(4):
        ls = _suit(L, s)
        if ls == 0:
            continue
        base = SUIT_BITS * s
        live = _suit(live_all, s)
        mine = _suit(H, s)
        others = live & ~mine
        while ls:
            b = HI16[ls]
            ls ^= 1 << b
            ls = _skip_group(live, mine, b, ls)
            c = base + b
            mv[d, n] = c
            beats = k == 0 or (s == wsuit and b > wrank) or (s == 0 and wsuit != 0)
            if seat == nil:
                if k == 0:
                    score = 16 - b
                elif not beats:
                    score = 100 + b
                else:
                    score = 16 - b
            elif (seat & 1) == (nil & 1):
                score = b + (50 if beats else 0)
            else:
                score = 16 - b
            sc[d, n] = score
            n += 1
    for i in range(1, n):
        m = mv[d, i]
        v = sc[d, i]
        j = i - 1
        while j >= 0 and sc[d, j] < v:
            mv[d, j + 1] = mv[d, j]
            sc[d, j + 1] = sc[d, j]
            j -= 1
        mv[d, j + 1] = m
        sc[d, j + 1] = v
    return n


@njit(_SIG_NIL, cache=True, _nrt=False)
def _nil(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, d, nil, flags,
         tt_keys, tt_vals, mv, sc, stats):
    """Can the side of seat ``nil`` keep it from winning any of the ``tl`` tricks left (the
    current one included), whatever the opponents do?"""
    stats[0] += 1
    z = tl & 0
    no = tl < 0
    slot = -1
    w0 = 0
    w1 = 0
    w2 = 0
    if k == 0:
        if tl == 0:
            return True
        if tl == 1:
            return _last_trick_winner(h, leader) != nil
        if not first:
            bk = broken
            if not bk and (_suit(h[0] | h[1] | h[2] | h[3], 0) == 0):
                bk = True
            if flags[0]:
                bk = True
            w0, w1, w2 = _key(h, leader, 1 if bk else 0)
            w2 |= (1 << 41) | (nil << 42)
            slot, found = _slot(tt_keys, w0, w1, w2)
            if found:
                stats[1] += 1
                return tt_vals[slot, LB] == 1
    seat = (leader + k) & 3
    mine = (seat & 1) == (nil & 1)
    L = legal_mask(h[seat], k, led, broken, first, flags)
    n = _gen_nil(h, seat, nil, L, tmask, mv, d, sc, k, wseat, wsuit, wrank)
    result = not mine
    for i in range(n):
        c = mv[d, i]
        s = c >> 4
        r = c & 15
        bit = 1 << c
        h[seat] ^= bit
        nb = broken or s == 0
        if k == 0:
            res = _nil(h, leader, k + 1, s, seat, s, r, bit, nb, first, tl, d + 1, nil, flags, tt_keys, tt_vals, mv, sc, stats)
        else:
            nws = wseat
            nwsu = wsuit
            nwr = wrank
            if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
                nws = seat
                nwsu = s
                nwr = r
            if k == 3:
                if nws == nil:
                    res = False
                else:
                    res = _nil(h, nws, z, z, z, z, z, z, nb, no, tl - 1, d + 1, nil, flags,
                               tt_keys, tt_vals, mv, sc, stats)
            else:
                res = _nil(h, leader, k + 1, led, nws, nwsu, nwr, tmask | bit, nb, first, tl, d + 1, nil, flags,
                           tt_keys, tt_vals, mv, sc, stats)
        h[seat] ^= bit
        if res == mine:
            result = mine
            break
    if slot >= 0:
        tt_keys[slot, 0] = w0
        tt_keys[slot, 1] = w1
        tt_keys[slot, 2] = w2
        tt_vals[slot, LB] = 1 if result else 0
        tt_vals[slot, UB] = 1 if result else 0
        tt_vals[slot, TL] = tl
        tt_vals[slot, BEST] = -1
    return result


@njit(_SIG_NIL_SAFE, cache=True, _nrt=False)
def nil_safe(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, nil, flags,
             tt_keys, tt_vals, mv, sc, stats):
    """Entry point of the nil search (see ``_nil``)."""
    return _nil(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, tl & 0, nil, flags,
                tt_keys, tt_vals, mv, sc, stats)


_SIG_CHILD = _B(_A1, _I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _I, _I, _A1, _A2, _A2_8, _A2, _A2, _A2, _A1)


@njit(_SIG_CHILD, cache=True, _nrt=False)
def _child_reaches(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, c, target, flags,
                   tt_keys, tt_vals, hist, mv, sc, stats):
    """After the seat to play plays card bit ``c``, can NS still take ``target`` of the ``tl``
    tricks left (the current one included)?"""
    seat = (leader + k) & 3
    s = c >> 4
    r = c & 15
    bit = 1 << c
    h[seat] ^= bit
    nb = broken or s == 0
    z = tl & 0
    _load_ws(h, flags, stats)
    if k == 0:
        res = _ab(leader, k + 1, s, seat, s, r, bit, nb, first, tl, target, z, tt_keys, stats)
    else:
        nws = wseat
        nwsu = wsuit
        nwr = wrank
        if (s == wsuit and r > wrank) or (s == 0 and wsuit != 0):
            nws = seat
            nwsu = s
            nwr = r
        if k == 3:
            nsw = 1 if (nws & 1) == 0 else 0
            if tl == 1:
                res = nsw >= target
            else:
                res = _ab(nws, z, z, z, z, z, z, nb, tl < 0, tl - 1, target - nsw, z, tt_keys, stats)
        else:
            res = _ab(leader, k + 1, led, nws, nwsu, nwr, tmask | bit, nb, first, tl, target, z, tt_keys, stats)
    h[seat] ^= bit
    return res


_SIG_JUDGE = types.UniTuple(_I, 3)(
    _A1, _I, _I, _I, _I, _I, _I, _I, _B, _B, _I, _I, _I, _A1, _A2, _A2_8, _A2, _A2, _A2, _A1, _A1, _A1
)


@njit(_SIG_JUDGE, cache=True)
def judge_position(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, played, known, flags,
                   tt_keys, tt_vals, hist, mv, sc, stats, out_cards, out_best):
    """Judge the card ``played`` (a bit) in a position: returns ``(ns, ns_after, n)`` where
    ``ns`` is NS's tricks with best play (``known`` when it is already known, else -1),
    ``ns_after`` NS's tricks after ``played`` with best play after it, and ``out_cards[:n]`` /
    ``out_best[:n]`` one card per group of equivalent legal cards and 1 where that card keeps
    ``ns`` for the side to play (one null-window search each)."""
    if known >= 0:
        ns = known
    else:
        guess = _playout(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, flags, hist, mv, sc)
        ns = _exact(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, guess, 0, tl, flags,
                    tt_keys, tt_vals, hist, mv, sc, stats)
    seat = (leader + k) & 3
    maxi = (seat & 1) == 0
    L = legal_mask(h[seat], k, led, broken, first, flags)
    n = _gen(h, seat, L, tmask, mv, MAX_PLY - 1, sc, k, led, wseat, wsuit, wrank, hist, -1)
    cards = mv[MAX_PLY - 1, :n] & 0xFF
    lows = mv[MAX_PLY - 1, :n] >> 8
    played_best = False
    for i in range(n):
        c = cards[i]
        out_cards[i] = c
        if maxi:
            ok = _child_reaches(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, c, ns, flags,
                                tt_keys, tt_vals, hist, mv, sc, stats)
        else:
            ok = not _child_reaches(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, c, ns + 1, flags,
                                    tt_keys, tt_vals, hist, mv, sc, stats)
        out_best[i] = 1 if ok else 0
        if ok and lows[i] <= played <= c:
            played_best = True
    # a card of a best group keeps ns; any other card's value lies beyond ns on the mover's
    # side (below it when NS play, above when EW play), which bounds its exact search
    if played_best:
        after = ns
    elif maxi:
        after = _after_card(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, played, ns - 1,
                            0, ns - 1, flags, tt_keys, tt_vals, hist, mv, sc, stats)
    else:
        after = _after_card(h, leader, k, led, wseat, wsuit, wrank, tmask, broken, first, tl, played, ns + 1,
                            ns + 1, tl, flags, tt_keys, tt_vals, hist, mv, sc, stats)
    return ns, after, n
