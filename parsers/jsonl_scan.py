"""A compiled reader of canonical JSON Lines (``spades-hand/1``) for the fast loader.

:func:`scan` reads a block of whole lines (bytes) into numpy arrays, one slot per line, in
compiled code (numba, every line on its own, lines in parallel).  It reads a line only when it can
*prove* that :func:`spadework.parsers.jsonl.record_from_obj` would read it to the very same record;
every other line is marked for the Python parser (which then gives the record, or the load error
with its message).  The subset it reads (FORMATS.md section 1):

- one JSON object per line; JSON whitespace between tokens (space, tab, CR);
- the known keys, each at most once, and ``x_*`` extension keys (each at most once, at most
  :data:`MAX_KEYS` of them, as for the keys of an object) whose values
  are strings without escapes, whole numbers of at most 15 digits, ``true``, ``false``, ``null``,
  or arrays and objects of those, nested at most :data:`MAX_DEPTH` deep, no key repeated within an
  object: the Python loader stores ``orjson.dumps`` of the extensions,
  which the scanner writes beside the block (:attr:`Scan.xbuf`); any other JSON value there (a
  float, an escape, a repeated key within it) is read and written back by orjson itself, as the
  Python loader does, and the line is the Python parser's if orjson refuses it; any other key (the Python
  parser warns about it) goes to the Python parser; required ``game_id`` (non-empty), ``hand``
  (>= 1), ``players``, ``dealer``, ``bids``;
- strings without control characters, valid UTF-8; ``schema`` exactly ``"spades-hand/1"``;
  escapes only in the text fields (``game_id``, ``event``, ``date``, ``table``, ``round``, a
  ``rules`` name, a player's name), and only ``\\"``, ``\\\\``, ``\\/`` and ``\\uXXXX`` of a
  character from U+0020 on (``json.dumps`` writes ``"Jos\\u00e9"``), decoded in the block's copy
  of a line read here;
- numbers written as whole numbers of at most 9 digits (no fraction, exponent or ``-0``), so every
  one fits the tables' INTEGER columns;
- seats exactly ``N E S W``, sides ``NS EW``, cards canonical codes (``AS``, ``TD``, ``BJ``);
- a bid a number or ``"nil"`` (any case), ``blind`` true or false; at most 8 bids, at most 16 cards dealt to a
  seat, at most 13 tricks of at most 4 cards (the Python parser's own limits on tricks);
- ``rules`` a string, or an object of the same values as an extension's
  (``{"preset": "standard", "extra_cards": ["BJ", "LJ"]}``; any other JSON in it goes to orjson as
  an extension's does); the Python loader stores
  ``orjson.dumps`` of the parsed object, which is its text without whitespace, so whitespace
  between its tokens is removed in the block's copy of a line read here (``json.dumps`` writes
  ``{"preset": "nyc", "bags_limit": 10}``);
- ``null`` where the Python parser reads it as absent (``event``, ``date``, ``table``, ``round``,
  ``rules``, ``schema``, ``deal``, ``tricks``, ``taken``, ``score``, ``score_before``,
  ``bags_before``, ``winner``, a player's name, a trick's winner, a number in ``taken`` or in a
  side's ``score``).

Everything else (a duplicate key, ``"hand": "3"``, ``3.0``, ``1e3``, ``"as"`` for ``AS``, a BOM,
an escape in a key, a card or a seat, ``\\n`` in a name) goes to the Python parser: the scanner never decides a line the reference would read
differently.  ``tests/test_loader_fast.py`` compares the two on odd lines and random records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np
import orjson

from spadework.parsers import cards as _cards
from spadework.parsers import encoding as _encoding
from spadework.parsers import jsontext
from spadework.parsers import numba_views as _views
from spadework.parsers import seats as _seats
from spadework.parsers.encoding import CARD_ID, NO_CARD
from spadework.parsers.numba_cache import depends
from spadework.parsers.numba_views import unmanaged as _unmanaged

# the reader compiles in card codes: numba's cache of this module is keyed on their modules too
depends(__file__, _encoding, _cards, _seats, _views)

MAX_BIDS = 8
MAX_DEALT = 16
MAX_TRICKS = 13
MAX_KEYS = 64
"""Most keys of a ``rules`` object, of an extension's object, and extension keys of a line, that the
scanner reads itself (it finds a repeated key by comparing with each one before)."""
MAX_DEPTH = 16
"""Deepest nesting of arrays and objects in a ``rules`` object or an extension's value that the
scanner reads itself (orjson refuses to write more than 254 levels)."""
MAX_DIGITS = 9
"""Longest whole number the scanner reads itself (10 digits may leave INTEGER range)."""

OK, PYTHON, BLANK = 0, 1, 2
"""Values of :attr:`Scan.status`: read here, for the Python parser, an empty or blank line."""
_SETTLE = 3
"""A status inside :func:`scan` only: read here once orjson has written a ``rules`` object's or
the extensions' text (:func:`_settle_in_python`), or the Python parser's when orjson refuses it."""

STRING_FIELDS = ("game_id", "event", "date", "table_name", "round", "rules", "player_n", "player_e", "player_s", "player_w")
"""The text columns :attr:`Scan.str_start`/``str_len`` locate, in this order."""
F_GAME, F_EVENT, F_DATE, F_TABLE, F_ROUND, F_RULES, F_PLAYER = 0, 1, 2, 3, 4, 5, 6
N_TEXT = len(STRING_FIELDS)
_SPACED_BIT = 16
"""Bit of ``ints[i, I_ESCAPED]``: the ``rules`` object holds whitespace to remove (see :func:`_settle_texts`)."""
_EXT_BIT = 17
"""Bit of ``ints[i, I_ESCAPED]``: the line has ``x_*`` extension keys (see :func:`_extensions`)."""
_PY_EXT_BIT = 18
"""Bit of ``ints[i, I_ESCAPED]``: an extension's value is JSON the scanner does not write back
itself (a float, an escape): orjson gives the ``extras`` text (see :func:`_settle_in_python`)."""
_PY_RULES_BIT = 19
"""Bit of ``ints[i, I_ESCAPED]``: the same for the ``rules`` object."""
_STRICT, _RAW = np.int64(0), np.int64(1)
"""Modes of :func:`_nested`: values written back as they are, or any JSON left to orjson."""

# key ids (top level)
K_SCHEMA, K_GAME, K_HAND, K_EVENT, K_DATE, K_TABLE, K_ROUND, K_RULES, K_PLAYERS, K_DEALER = range(10)
K_SCORE_BEFORE, K_BAGS_BEFORE, K_DEAL, K_BIDS, K_TRICKS, K_TAKEN, K_SCORE, K_WINNER = range(10, 18)
K_EXT = 18  # an x_* extension key
_TOP_KEYS = (
    "schema game_id hand event date table round rules players dealer score_before bags_before deal bids tricks taken score winner"
).split()
_KEY_BYTES = np.zeros((len(_TOP_KEYS), 16), dtype=np.uint8)
_KEY_LENS = np.zeros(len(_TOP_KEYS), dtype=np.int64)
for _i, _k in enumerate(_TOP_KEYS):
    _KEY_BYTES[_i, : len(_k)] = np.frombuffer(_k.encode(), dtype=np.uint8)
    _KEY_LENS[_i] = len(_k)

# card code -> id, indexed by rank byte * 256 + suit byte
def _card_table() -> np.ndarray:
    """``card_lut`` of the compiled reader: every spelling of a card the Python parser accepts
    (:func:`spadework.parsers.cards.parse_card`: ``AS``, ``as``, ``aS``, ``10H``, ``h10``, ``A♠``,
    ``bj``...) -> card id.  Bytes 0..65535: two-byte spellings, indexed by first byte * 256 + second;
    then the longer spellings (3 to 7 bytes): their count as an int64, the sorted keys (int64:
    the bytes little-endian, the length in the top byte), one id byte per key."""
    import itertools

    from spadework.parsers.cards import CardError, parse_card, spellings

    lut = np.full(65536, NO_CARD, dtype=np.uint8)
    longer: dict[int, int] = {}
    for text in spellings():
        cases = [(ch.lower(), ch.upper()) if ch.isascii() and ch.isalpha() else (ch,) for ch in text]
        for variant in {"".join(v) for v in itertools.product(*cases)}:
            try:
                cid = CARD_ID[parse_card(variant)]
            except CardError:
                continue
            raw = variant.encode()
            if len(raw) == 2:
                lut[raw[0] * 256 + raw[1]] = cid
            elif 3 <= len(raw) <= 7:
                longer[int.from_bytes(raw, "little") | len(raw) << 56] = cid
    keys = np.array(sorted(longer), dtype=np.int64)
    ids = np.array([longer[k] for k in keys.tolist()], dtype=np.uint8)
    return np.concatenate([lut, np.array([len(keys)], np.int64).view(np.uint8), keys.view(np.uint8), ids])


_CARD_LUT = _card_table()
_SCHEMA = np.frombuffer(b"spades-hand/1", dtype=np.uint8).copy()


def _packed_word(word: str) -> np.int64:
    """``word`` (ASCII, at most 8 letters) as :func:`_word` takes it.  An ``np.int64``, not an ``int``:
    numba compiles a function again for each distinct int literal it is called with, and typed this
    way every key shares one compiled ``_word``."""
    return np.int64(int.from_bytes(word.encode("ascii"), "little"))


_W_EW = _packed_word("EW")
_W_NS = _packed_word("NS")
_W_BAGS = _packed_word("bags")
_W_BID = _packed_word("bid")
_W_BLIND = _packed_word("blind")
_W_CARDS = _packed_word("cards")
_W_LEADER = _packed_word("leader")
_W_POINTS = _packed_word("points")
_W_SEAT = _packed_word("seat")
_W_TOTAL = _packed_word("total")
_W_WINNER = _packed_word("winner")


# --- the output layout: three arrays per block, one row per line ---------------------------------
# ints (int64): the numbers and flags of a line
I_HAND, I_DEALER, I_WINNER, I_RULES_KIND, I_HAS_DEAL, I_HAS_TRICKS, I_N_BIDS, I_N_TRICKS = range(8)
I_TAKEN = 8  # 4: N E S W
I_SCORE = 12  # 6: points, total, bags of NS, then of EW
I_BEFORE = 18  # 4: score_before NS EW, bags_before NS EW
I_SET = 22  # bits: taken 0..3, score 4..9, before 10..13 (set when recorded)
I_BID_VALUE = 23  # MAX_BIDS
I_BID_FLAGS = I_BID_VALUE + MAX_BIDS  # bits: nil 0..7, blind 8..15
I_ESCAPED = I_BID_FLAGS + 1  # bits: the text fields (STRING_FIELDS order) written with escapes; _SPACED_BIT, _EXT_BIT
I_EXT_LEN = I_ESCAPED + 1  # length of the line's extension text in Scan.xbuf (from the line's start)
I_EXT_FROM = I_EXT_LEN + 1  # where the line's first extension key starts (its quote), in the block
I_EXT_TO = I_EXT_FROM + 1  # where the line's last extension value ends, in the block
N_INTS = I_EXT_TO + 1
# small (uint8): seats and cards
S_BID_SEAT = 0
S_DEAL_LEN = S_BID_SEAT + MAX_BIDS
S_DEAL = S_DEAL_LEN + 4  # 4 x MAX_DEALT
S_LEADER = S_DEAL + 4 * MAX_DEALT
S_TRICK_WINNER = S_LEADER + MAX_TRICKS
S_TRICK_LEN = S_TRICK_WINNER + MAX_TRICKS
S_CARDS = S_TRICK_LEN + MAX_TRICKS  # MAX_TRICKS x 4
N_SMALL = S_CARDS + 4 * MAX_TRICKS
# strs (int64): start and length of each of STRING_FIELDS (length -1 when absent)
N_STRS = 2 * len(STRING_FIELDS)


@dataclass
class Scan:
    """What :func:`scan` read from ``n`` lines (arrays indexed by line; meaningful where ``status == OK``).

    ``status``: OK / PYTHON / BLANK.  Text: ``str_start``/``str_len`` ``[n, 10]`` (offsets into the
    block; length -1 for absent), ``rules_kind`` (0 absent, 1 a preset name, 2 an object).
    Numbers with ``*_set`` flags: ``hand``; ``taken[n, 4]``; ``score[n, 6]`` (points, total,
    bags of NS, then of EW); ``before[n, 4]`` (score_before NS EW, bags_before NS EW; each pair
    present or not).  Seats: ``dealer``, ``winner`` (side id, 255 none).  ``n_bids``,
    ``bid_seat``, ``bid_value``, ``bid_nil``, ``bid_blind`` ``[n, 8]``.  ``has_deal``,
    ``deal_len[n, 4]``, ``deal[n, 4, 16]`` (card ids).  ``has_tricks``, ``n_tricks``,
    ``leader``/``trick_winner``/``trick_len`` ``[n, 13]``, ``cards[n, 13, 4]``.
    All are views of three arrays the compiled reader fills (``ints``, ``small``, ``strs``).
    """

    status: np.ndarray
    ints: np.ndarray
    small: np.ndarray
    strs: np.ndarray
    xbuf: np.ndarray | None = None  # extension texts (``{"x_a":1}``), each at its line's start
    starts: np.ndarray | None = None  # each line's start in the block

    def __post_init__(self) -> None:
        n, I, S = len(self.status), self.ints, self.small  # noqa: E741
        bits = lambda col, k: ((I[:, col] >> k) & 1).astype(bool)  # noqa: E731
        self.str_start = self.strs[:, 0::2]
        self.str_len = self.strs[:, 1::2]
        self.rules_kind = I[:, I_RULES_KIND]
        self.hand = I[:, I_HAND]
        self.dealer = I[:, I_DEALER]
        self.winner = I[:, I_WINNER]
        self.taken = I[:, I_TAKEN : I_TAKEN + 4]
        self.taken_set = np.stack([bits(I_SET, k) for k in range(4)], axis=1) if n else np.zeros((0, 4), bool)
        self.score = I[:, I_SCORE : I_SCORE + 6]
        self.score_set = np.stack([bits(I_SET, 4 + k) for k in range(6)], axis=1) if n else np.zeros((0, 6), bool)
        self.before = I[:, I_BEFORE : I_BEFORE + 4]
        self.before_set = np.stack([bits(I_SET, 10 + k) for k in range(4)], axis=1) if n else np.zeros((0, 4), bool)
        self.n_bids = I[:, I_N_BIDS]
        self.bid_seat = S[:, S_BID_SEAT : S_BID_SEAT + MAX_BIDS]
        self.bid_value = I[:, I_BID_VALUE : I_BID_VALUE + MAX_BIDS]
        self.bid_nil = np.stack([bits(I_BID_FLAGS, k) for k in range(MAX_BIDS)], axis=1) if n else np.zeros((0, MAX_BIDS), bool)
        self.bid_blind = (
            np.stack([bits(I_BID_FLAGS, 8 + k) for k in range(MAX_BIDS)], axis=1) if n else np.zeros((0, MAX_BIDS), bool)
        )
        self.has_deal = I[:, I_HAS_DEAL].astype(bool)
        self.deal_len = S[:, S_DEAL_LEN : S_DEAL_LEN + 4]
        self.deal = S[:, S_DEAL : S_DEAL + 4 * MAX_DEALT].reshape(n, 4, MAX_DEALT)
        self.has_tricks = I[:, I_HAS_TRICKS].astype(bool)
        self.n_tricks = I[:, I_N_TRICKS]
        self.leader = S[:, S_LEADER : S_LEADER + MAX_TRICKS]
        self.trick_winner = S[:, S_TRICK_WINNER : S_TRICK_WINNER + MAX_TRICKS]
        self.trick_len = S[:, S_TRICK_LEN : S_TRICK_LEN + MAX_TRICKS]
        self.cards = S[:, S_CARDS : S_CARDS + 4 * MAX_TRICKS].reshape(n, MAX_TRICKS, 4)


def scan(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, threads: int | None = None) -> Scan:
    """Read the lines ``buf[starts[i]:ends[i]]`` (``uint8`` block; ends exclude the newline).

    Lines are independent; they are read in parallel, in slices of lines on ``threads`` threads
    (default ``numba.get_num_threads()``; the compiled reader releases the GIL).  See the module doc
    for what is read here and what is left to the Python parser.
    """
    n = len(starts)
    status = np.zeros(n, np.uint8)
    ints = np.zeros((n, N_INTS), np.int64)
    small = np.zeros((n, N_SMALL), np.uint8)
    strs = np.zeros((n, N_STRS), np.int64)
    xbuf = np.empty(len(buf), np.uint8)  # extension texts, at their line's place (pages touched only if written)
    starts, ends = starts.astype(np.int64), ends.astype(np.int64)
    threads = max(1, int(nb.get_num_threads() if threads is None else threads))
    if threads == 1 or n < 64 * threads:
        _scan_lines(buf, starts, ends, _KEY_BYTES, _KEY_LENS, _CARD_LUT, _SCHEMA, status, ints, small, strs, xbuf)
        _settle_in_python(buf, starts, ends, status, ints, strs, xbuf)
        return Scan(status, ints, small, strs, xbuf, starts)
    from concurrent.futures import ThreadPoolExecutor

    # slices of about equal bytes, a few per thread (lines differ in length)
    cuts = np.searchsorted(np.cumsum(ends - starts), np.linspace(0, int((ends - starts).sum()), 4 * threads + 1)[1:-1])
    bounds = [0, *sorted({int(c) for c in cuts}), n]
    with ThreadPoolExecutor(threads) as pool:
        jobs = [
            pool.submit(_scan_lines, buf, starts[lo:hi], ends[lo:hi], _KEY_BYTES, _KEY_LENS, _CARD_LUT, _SCHEMA,
                        status[lo:hi], ints[lo:hi], small[lo:hi], strs[lo:hi], xbuf)  # fmt: skip
            for lo, hi in zip(bounds, bounds[1:])
            if hi > lo
        ]
        for j in jobs:
            j.result()
    _settle_in_python(buf, starts, ends, status, ints, strs, xbuf)
    return Scan(status, ints, small, strs, xbuf, starts)


# --- the compiled reader ------------------------------------------------------------------------
# Every helper returns the position after what it read, or -1 when the line is not one the
# scanner reads (the Python parser then reads it).

_jit = nb.njit(cache=True, nogil=True, boundscheck=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
"""The reader's helpers: called from compiled code only, so no Python or C entry point is built."""

# Constant arguments are passed as np.int64, never as int literals: numba compiles a function once
# per distinct literal it is called with (``_text`` six times, ``_seat_object`` three times...),
# which doubled the reader's first compile; LLVM still sees the constants once it inlines the call.
_LBRACE, _RBRACE, _LBRACKET, _RBRACKET = (np.int64(c) for c in b"{}[]")
_MAX_DIGITS = np.int64(MAX_DIGITS)
_RULES_DIGITS = np.int64(15)
"""Digits of a number inside a ``rules`` object."""
_PLAYERS, _TAKEN, _DEAL = np.int64(0), np.int64(1), np.int64(2)
"""``_seat_object`` kinds."""



@_jit
def _ws(b, p, e):
    while p < e and (b[p] == 32 or b[p] == 9 or b[p] == 13):
        p += 1
    return p


@_jit
def _utf8(b, p, e):
    """At a byte >= 0x80: the position after its UTF-8 character, or -1 (an overlong form, a
    surrogate, a code point beyond U+10FFFF, a cut sequence)."""
    c = b[p]
    if 0xC2 <= c <= 0xDF:
        k = 1
    elif 0xE0 <= c <= 0xEF:
        k = 2
    elif 0xF0 <= c <= 0xF4:
        k = 3
    else:
        return -1
    if p + k >= e:
        return -1
    c1 = b[p + 1]
    if c == 0xE0 and c1 < 0xA0:
        return -1
    if c == 0xED and c1 > 0x9F:
        return -1
    if c == 0xF0 and c1 < 0x90:
        return -1
    if c == 0xF4 and c1 > 0x8F:
        return -1
    for j in range(1, k + 1):
        if b[p + j] & 0xC0 != 0x80:
            return -1
    return p + k + 1


@_jit
def _plain(b, p, e):
    """From ``p`` inside a string: the position of the first ``"`` or backslash, or -1 (a control
    character, bad UTF-8, the line's end)."""
    while p < e:
        c = b[p]
        if c == 34 or c == 92:
            return p
        if c < 32:
            return -1
        if c < 128:
            p += 1
        else:
            p = _utf8(b, p, e)
            if p < 0:
                return -1
    return -1


@_jit
def _string(b, p, e):
    """At an opening quote: the position after the closing quote, or -1 (escape, control char, bad UTF-8)."""
    if p >= e or b[p] != 34:
        return -1
    q = _plain(b, p + 1, e)
    if q < 0 or b[q] != 34:
        return -1
    return q + 1


@_jit
def _same(a, pa, b, pb, n):
    """True when ``a[pa:pa+n]`` and ``b[pb:pb+n]`` hold the same bytes."""
    for m in range(n):
        if a[pa + m] != b[pb + m]:
            return False
    return True


@_jit
def _hex4(b, p, e):
    """The value of the four hex digits at ``b[p:p+4]``, or -1."""
    if p + 4 > e:
        return -1
    v = 0
    for j in range(4):
        c = b[p + j]
        if 48 <= c <= 57:
            d = c - 48
        elif 65 <= c <= 70:
            d = c - 55
        elif 97 <= c <= 102:
            d = c - 87
        else:
            return -1
        v = v * 16 + d
    return v


@_jit
def _space_first(b, p, e):
    """Whether the text of a string read by :func:`_text` (``b[p:e]``, up to its closing quote)
    starts with white space as ``str.isspace`` has it: a space, or U+0085, U+00A0, U+1680,
    U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, raw or as a ``\\u`` escape (the reader
    lets no control character in)."""
    c = b[p]
    if c == 32:
        return True
    if c == 92:
        u = _hex4(b, p + 2, e) if b[p + 1] == 117 else -1
    elif 0xC2 <= c <= 0xDF:
        u = ((c & 0x1F) << 6) | (b[p + 1] & 0x3F)
    elif 0xE0 <= c <= 0xEF:
        u = ((c & 0x0F) << 12) | ((b[p + 1] & 0x3F) << 6) | (b[p + 2] & 0x3F)
    else:
        return False
    return (
        u == 0x85 or u == 0xA0 or u == 0x1680 or 0x2000 <= u <= 0x200A or u == 0x2028 or u == 0x2029
        or u == 0x202F or u == 0x205F or u == 0x3000 or u == 32
    )


@_jit
def _escaped_string(b, p, e):
    """At an opening quote of a string that :func:`_string` refused: the position after the closing
    quote when its escapes are all ones read here, else -1.  Read: ``\\"``, ``\\\\``, ``\\/`` and
    ``\\uXXXX`` of a character from U+0020 on (a surrogate pair beyond U+FFFF), so the text never
    holds a control character; ``\\n``, ``\\t``, ``\\u0000``-``\\u001f`` and a lone surrogate go to
    the Python parser."""
    p += 1
    while True:
        p = _plain(b, p, e)
        if p < 0:
            return -1
        if b[p] == 34:
            return p + 1
        if p + 1 >= e:  # a backslash
            return -1
        d = b[p + 1]
        if d == 34 or d == 92 or d == 47:
            p += 2
            continue
        if d != 117:
            return -1
        u = _hex4(b, p + 2, e)
        if u < 0x20 or 0xDC00 <= u <= 0xDFFF:
            return -1
        if 0xD800 <= u <= 0xDBFF:
            if p + 12 > e or b[p + 6] != 92 or b[p + 7] != 117:
                return -1
            u2 = _hex4(b, p + 8, e)
            if u2 < 0xDC00 or u2 > 0xDFFF:
                return -1
            p += 12
        else:
            p += 6


@_jit
def _unescape(b, p, n):
    """Decode the escapes of ``b[p:p+n]`` (checked by :func:`_escaped_string`) in place, as UTF-8
    (never longer than the escape); the new length."""
    w, r, end = p, p, p + n
    while r < end:
        c = b[r]
        if c != 92:
            b[w] = c
            w += 1
            r += 1
            continue
        d = b[r + 1]
        if d != 117:
            b[w] = d
            w += 1
            r += 2
            continue
        u = _hex4(b, r + 2, end)
        r += 6
        if 0xD800 <= u <= 0xDBFF:
            u = 0x10000 + ((u - 0xD800) << 10) + (_hex4(b, r + 2, end) - 0xDC00)
            r += 6
        if u < 0x80:
            b[w] = u
            w += 1
        elif u < 0x800:
            b[w] = 0xC0 | (u >> 6)
            b[w + 1] = 0x80 | (u & 0x3F)
            w += 2
        elif u < 0x10000:
            b[w] = 0xE0 | (u >> 12)
            b[w + 1] = 0x80 | ((u >> 6) & 0x3F)
            b[w + 2] = 0x80 | (u & 0x3F)
            w += 3
        else:
            b[w] = 0xF0 | (u >> 18)
            b[w + 1] = 0x80 | ((u >> 12) & 0x3F)
            b[w + 2] = 0x80 | ((u >> 6) & 0x3F)
            b[w + 3] = 0x80 | (u & 0x3F)
            w += 4
    return w - p


@_jit
def _int(b, p, e, max_digits):
    """A whole number (``-?(0|[1-9][0-9]*)``, at most ``max_digits`` digits, not ``-0``):
    (value, position after) or (0, -1)."""
    neg = False
    if p < e and b[p] == 45:
        neg = True
        p += 1
    if p >= e or b[p] < 48 or b[p] > 57:
        return 0, -1
    v = 0
    if b[p] == 48:
        if neg:
            return 0, -1
        p += 1
    else:
        nd = 0
        while p < e and 48 <= b[p] <= 57:
            v = v * 10 + (b[p] - 48)
            nd += 1
            p += 1
            if nd > max_digits:
                return 0, -1
    if p < e and (b[p] == 46 or b[p] == 101 or b[p] == 69 or (48 <= b[p] <= 57)):
        return 0, -1  # a fraction, an exponent, a leading zero
    return (-v if neg else v), p


@_jit
def _null(b, p, e):
    if p + 4 <= e and b[p] == 110 and b[p + 1] == 117 and b[p + 2] == 108 and b[p + 3] == 108:
        return p + 4
    return -1


@_jit
def _bool(b, p, e):
    """``true``/``false``: (value, position after) or (False, -1)."""
    if p + 4 <= e and b[p] == 116 and b[p + 1] == 114 and b[p + 2] == 117 and b[p + 3] == 101:
        return True, p + 4
    if p + 5 <= e and b[p] == 102 and b[p + 1] == 97 and b[p + 2] == 108 and b[p + 3] == 115 and b[p + 4] == 101:
        return False, p + 5
    return False, -1


@_jit
def _seat_of(c):
    if c == 78:
        return 0
    if c == 69:
        return 1
    if c == 83:
        return 2
    if c == 87:
        return 3
    return 255


@_jit
def _seat(b, p, e):
    """A seat string "N".."W": (seat id, position after) or (255, -1)."""
    if p + 3 <= e and b[p] == 34 and b[p + 2] == 34:
        s = _seat_of(b[p + 1])
        if s < 4:
            return s, p + 3
    return 255, -1


@_jit
def _side(b, p, e):
    """A side string "NS"/"EW": (side id, position after) or (255, -1)."""
    if p + 4 <= e and b[p] == 34 and b[p + 3] == 34:
        if b[p + 1] == 78 and b[p + 2] == 83:
            return 0, p + 4
        if b[p + 1] == 69 and b[p + 2] == 87:
            return 1, p + 4
    return 255, -1


@_jit
def _key(b, p, e):
    """A key string: (start, end) of its text and the position after the colon, or (-1, -1, -1)."""
    q = _string(b, p, e)
    if q < 0:
        return -1, -1, -1
    ks, ke = p + 1, q - 1
    q = _ws(b, q, e)
    if q >= e or b[q] != 58:
        return -1, -1, -1
    return ks, ke, _ws(b, q + 1, e)


@_jit
def _word(b, ks, ke, word):
    """True when the key text ``b[ks:ke]`` is ``word``: up to 8 ASCII letters packed in an int64, the
    first in the lowest byte (:func:`_packed_word`)."""
    n = ke - ks
    if n > 8:
        return False
    for j in range(n):
        if b[ks + j] != (word >> (8 * j)) & 0xFF:
            return False
    return n == 8 or (word >> (8 * n)) & 0xFF == 0


@_jit
def _top_key(b, ks, ke, key_bytes, key_lens):
    n = ke - ks
    for k in range(len(key_lens)):
        if key_lens[k] == n:
            same = True
            for j in range(n):
                if b[ks + j] != key_bytes[k, j]:
                    same = False
                    break
            if same:
                return k
    return -1


@_jit
def _card(b, p, e, card_lut):
    """A card's string (any spelling :func:`spadework.parsers.cards.parse_card` reads, see
    :func:`_card_table`): (card id, position after) or (255, -1)."""
    if p + 4 <= e and b[p] == 34 and b[p + 3] == 34:
        c = card_lut[np.int64(b[p + 1]) * 256 + b[p + 2]]
        if c != 255:
            return c, p + 4
        return 255, -1
    return _card_text(b, p, e, card_lut)


@_jit
def _card_text(b, p, e, card_lut):
    """:func:`_card` for a spelling of 3 to 7 bytes (``10H``, ``A♠``): a binary search of the keys."""
    q = _string(b, p, e)
    n = q - p - 2
    if q < 0 or n < 3 or n > 7:
        return 255, -1
    key = np.int64(n) << 56
    for j in range(n):
        key |= np.int64(b[p + 1 + j]) << (8 * j)
    m = card_lut[65536:65544].view(np.int64)[0]
    keys = card_lut[65544 : 65544 + 8 * m].view(np.int64)
    k = np.searchsorted(keys, key)
    if k < m and keys[k] == key:
        return card_lut[65544 + 8 * m + k], q
    return 255, -1


@_jit
def _sep(b, p, e, close):
    """After a value inside an object or array: (position after ``,`` and spaces, False), or
    (position after ``close``, True), or (-1, True)."""
    p = _ws(b, p, e)
    if p < e and b[p] == 44:
        return _ws(b, p + 1, e), False
    if p < e and b[p] == close:
        return p + 1, True
    return -1, True


@_jit
def _open(b, p, e, opener, close):
    """At ``opener``: (position after it and spaces, True when the container is empty and closed
    at once: then the position is after ``close``), or (-1, True)."""
    if p >= e or b[p] != opener:
        return -1, True
    p = _ws(b, p + 1, e)
    if p < e and b[p] == close:
        return p + 1, True
    return p, False


@_jit
def _scalar(b, p, e):
    """A value of a ``rules`` object or of an extension as the scanner stores it (orjson writes it
    back the same): a string without escapes, a whole number of at most 15 digits, ``true``,
    ``false`` or ``null``.  The position after it, or -1."""
    c = b[p]
    if c == 34:
        return _string(b, p, e)
    if c == 45 or 48 <= c <= 57:
        _, q = _int(b, p, e, _RULES_DIGITS)
        return q
    if c == 110:
        return _null(b, p, e)
    _, q = _bool(b, p, e)
    return q


@_jit
def _value(b, p, e, i, ints, bit, py_bit):
    """An extension's value or a ``rules`` object: a :func:`_scalar` or a :func:`_nested` array or
    object of them, which the scanner writes back itself (``bit``: whitespace to remove); any other
    JSON value (a float, an escape, a repeated key) is marked ``py_bit`` of ``ints[i, I_ESCAPED]``
    for orjson to write back.  The position after it, or -1."""
    c = b[p]
    container = c == 123 or c == 91
    q = _nested(b, p, e, i, ints, bit, _STRICT) if container else _scalar(b, p, e)
    if q < 0:
        q = _nested(b, p, e, i, ints, bit, _RAW) if container else _raw_scalar(b, p, e)
        if q >= 0:
            ints[i, I_ESCAPED] |= 1 << py_bit
    return q


@_jit
def _nested(b, p, e, i, ints, bit, raw):
    """At ``{`` or ``[``: a ``rules`` object or an extension's array or object, as the scanner
    stores it: :func:`_scalar` values, and arrays and objects of them at most :data:`MAX_DEPTH`
    deep (``{"extra_cards": ["BJ", "LJ"], "blind_bids": {"min": 7}}``), with no key repeated within
    an object (orjson keeps the last of a repeated key: the text would differ) and at most
    :data:`MAX_KEYS` keys in one.  Returns the position after the closing bracket (marking
    whitespace between tokens as ``bit`` of ``ints[i, I_ESCAPED]``) or -1.  The text stored is
    orjson's, without whitespace: :func:`_copy_compact` removes it once the line is known to be
    read here.

    ``raw`` (:data:`_RAW`): any scalar JSON allows (floats, escapes: :func:`_raw_scalar`) and
    repeated keys, only the structure checked; orjson then reads the text and writes it back
    (:func:`_settle_in_python`), and refuses what is not JSON."""
    start = p
    depth = 0
    objects = 0  # bit d: the container open at depth d is an object
    spaced = False
    while True:
        # a value at p (p < e)
        c = b[p]
        if c == 123 or c == 91:
            depth += 1
            if depth > MAX_DEPTH:
                return -1
            if c == 123:
                objects |= 1 << depth
            else:
                objects &= ~(1 << depth)
            q = _ws(b, p + 1, e)
            spaced |= q != p + 1
            p = q
            if p >= e:
                return -1
            if b[p] != c + 2:  # not empty (} is { + 2, ] is [ + 2)
                if c == 123:
                    p, sp = _member(b, p, e, raw)
                    if p < 0:
                        return -1
                    spaced |= sp
                continue
            p += 1
            depth -= 1
        else:
            p = _raw_scalar(b, p, e) if raw else _scalar(b, p, e)
            if p < 0:
                return -1
        # after a value: a comma and the next value, or closing brackets
        while depth > 0:
            q = _ws(b, p, e)
            spaced |= q != p
            p = q
            if p >= e:
                return -1
            if b[p] == 44:
                q = _ws(b, p + 1, e)
                spaced |= q != p + 1
                p = q
                if p >= e:
                    return -1
                if (objects >> depth) & 1:
                    p, sp = _member(b, p, e, raw)
                    if p < 0:
                        return -1
                    spaced |= sp
                break
            if b[p] != (125 if (objects >> depth) & 1 else 93):
                return -1
            p += 1
            depth -= 1
        if depth == 0:
            break
    if raw:
        return p
    if not _distinct_keys(b, start, p):
        return -1
    if spaced:
        ints[i, I_ESCAPED] |= 1 << bit
    return p


@_jit
def _member(b, p, e, raw):
    """At an object's key: (the position of its value, True when spaces were around the colon),
    or (-1, False)."""
    q = _raw_string(b, p, e) if raw else _string(b, p, e)
    if q < 0:
        return -1, False
    r = _ws(b, q, e)
    if r >= e or b[r] != 58:
        return -1, False
    v = _ws(b, r + 1, e)
    if v >= e:
        return -1, False
    return v, r != q or v != r + 1


@_jit
def _raw_string(b, p, e):
    """At an opening quote: the position after the closing quote of a string with any escapes
    (orjson checks them, and the UTF-8), or -1 (a control character, no closing quote)."""
    if p >= e or b[p] != 34:
        return -1
    p += 1
    while p < e:
        c = b[p]
        if c == 34:
            return p + 1
        if c < 32:
            return -1
        p += 2 if c == 92 else 1
    return -1


@_jit
def _raw_scalar(b, p, e):
    """Any JSON scalar's extent, for orjson to read: a :func:`_raw_string`, the characters of a
    number (``-1.5e3``; orjson refuses a malformed one), ``null``, ``true``, ``false``.  The
    position after it, or -1."""
    c = b[p]
    if c == 34:
        return _raw_string(b, p, e)
    if c == 45 or 48 <= c <= 57:
        q = p + 1
        while q < e:
            c = b[q]
            if not (48 <= c <= 57 or c == 46 or c == 101 or c == 69 or c == 43 or c == 45):
                break
            q += 1
        return q
    return _scalar(b, p, e)


@_jit
def _distinct_keys(b, p, end):
    """Every object in ``b[p:end]`` (well formed, strings without escapes) has distinct keys, at
    most :data:`MAX_KEYS` of them (the search is quadratic)."""
    r = p
    while r < end:
        c = b[r]
        if c == 34:
            r = _string(b, r, end)
            continue
        if c == 123:
            first = _ws(b, r + 1, end)
            k = first if b[first] == 34 else -1
            n = 0
            while k >= 0:
                n += 1
                if n > MAX_KEYS:
                    return False
                kend = _string(b, k, end)
                r2 = first
                while r2 < k:
                    q2 = _string(b, r2, end)
                    if q2 - r2 == kend - k and _same(b, r2 + 1, b, k + 1, kend - k - 2):
                        return False
                    r2 = _next_member(b, q2, end)
                k = _next_member(b, kend, end)
        r += 1
    return True


@_jit
def _next_member(b, q, end):
    """From the end of a key (well formed): the position of the next key of the same object, or -1
    at the object's end."""
    v = _ws(b, _ws(b, q, end) + 1, end)  # past the colon
    r = _ws(b, _skip_value(b, v, end), end)
    if b[r] == 44:
        return _ws(b, r + 1, end)
    return -1


@_jit
def _seat_object(b, p, e, i, kind, ints, small, strs, card_lut):
    """``players`` (kind 0), ``taken`` (1) or ``deal`` (2) at ``{``: the position after ``}`` or -1."""
    p, done = _open(b, p, e, _LBRACE, _RBRACE)
    if done:
        return p
    got = 0
    while True:
        ks, ke, p = _key(b, p, e)
        if p < 0 or p >= e or ke - ks != 1:
            return -1
        s = _seat_of(b[ks])
        if s > 3 or (got >> s) & 1:
            return -1
        got |= 1 << s
        if kind == 0:
            if b[p] == 110:
                p = _null(b, p, e)
            else:
                p = _text(b, p, e, i, np.int64(F_PLAYER + s), strs, ints)
        elif kind == 1:
            if b[p] == 110:
                p = _null(b, p, e)
            else:
                v, p = _int(b, p, e, _MAX_DIGITS)
                ints[i, I_TAKEN + s] = v
                ints[i, I_SET] |= 1 << s
        else:
            p, done = _open(b, p, e, _LBRACKET, _RBRACKET)
            nd = 0
            if not done:
                while True:
                    cid, p = _card(b, p, e, card_lut)
                    if p < 0 or nd >= MAX_DEALT:
                        return -1
                    small[i, S_DEAL + s * MAX_DEALT + nd] = cid
                    nd += 1
                    p, done = _sep(b, p, e, _RBRACKET)
                    if done:
                        break
            small[i, S_DEAL_LEN + s] = nd
        if p < 0:
            return -1
        p, done = _sep(b, p, e, _RBRACE)
        if done:
            return p


@_jit
def _before_object(b, p, e, i, base, ints):
    """``score_before`` (base 0) or ``bags_before`` (base 2): both sides required."""
    p, done = _open(b, p, e, _LBRACE, _RBRACE)
    if done:
        return -1
    got = 0
    while True:
        ks, ke, p = _key(b, p, e)
        if p < 0 or p >= e:
            return -1
        sd = 0 if _word(b, ks, ke, _W_NS) else (1 if _word(b, ks, ke, _W_EW) else 9)
        if sd > 1 or (got >> sd) & 1:
            return -1
        got |= 1 << sd
        v, p = _int(b, p, e, _MAX_DIGITS)
        if p < 0:
            return -1
        ints[i, I_BEFORE + base + sd] = v
        p, done = _sep(b, p, e, _RBRACE)
        if done:
            break
    if p < 0 or got != 3:
        return -1
    ints[i, I_SET] |= 3 << (10 + base)
    return p


@_jit
def _score_object(b, p, e, i, ints):
    p, done = _open(b, p, e, _LBRACE, _RBRACE)
    if done:
        return p
    got = 0
    while True:
        ks, ke, p = _key(b, p, e)
        if p < 0 or p >= e:
            return -1
        sd = 0 if _word(b, ks, ke, _W_NS) else (1 if _word(b, ks, ke, _W_EW) else 9)
        if sd > 1 or (got >> sd) & 1:
            return -1
        got |= 1 << sd
        p, done = _open(b, p, e, _LBRACE, _RBRACE)
        if not done:
            got2 = 0
            while True:
                ks, ke, p = _key(b, p, e)
                if p < 0 or p >= e:
                    return -1
                if _word(b, ks, ke, _W_POINTS):
                    f = 0
                elif _word(b, ks, ke, _W_TOTAL):
                    f = 1
                elif _word(b, ks, ke, _W_BAGS):
                    f = 2
                else:
                    return -1  # an unknown key: the Python parser warns about it
                if (got2 >> f) & 1:
                    return -1
                got2 |= 1 << f
                if b[p] == 110:
                    p = _null(b, p, e)
                else:
                    v, p = _int(b, p, e, _MAX_DIGITS)
                    ints[i, I_SCORE + 3 * sd + f] = v
                    ints[i, I_SET] |= 1 << (4 + 3 * sd + f)
                if p < 0:
                    return -1
                p, done = _sep(b, p, e, _RBRACE)
                if done:
                    break
        if p < 0:
            return -1
        p, done = _sep(b, p, e, _RBRACE)
        if done:
            return p


@_jit
def _bids_array(b, p, e, i, ints, small):
    p, done = _open(b, p, e, _LBRACKET, _RBRACKET)
    if done:
        return p
    n = 0
    while True:
        if n >= MAX_BIDS:
            return -1
        p, done = _open(b, p, e, _LBRACE, _RBRACE)
        if done:
            return -1  # seat and bid are required
        got = 0
        while True:
            ks, ke, p = _key(b, p, e)
            if p < 0 or p >= e:
                return -1
            if _word(b, ks, ke, _W_SEAT):
                f = 0
            elif _word(b, ks, ke, _W_BID):
                f = 1
            elif _word(b, ks, ke, _W_BLIND):
                f = 2
            else:
                return -1
            if (got >> f) & 1:
                return -1
            got |= 1 << f
            if f == 0:
                s, p = _seat(b, p, e)
                small[i, S_BID_SEAT + n] = s
            elif f == 1:
                if b[p] == 34:
                    # "nil" in any case (the Python parser lower-cases it)
                    if p + 5 <= e and b[p + 1] | 32 == 110 and b[p + 2] | 32 == 105 and b[p + 3] | 32 == 108 and b[p + 4] == 34:
                        ints[i, I_BID_FLAGS] |= 1 << n
                        p += 5
                    else:
                        return -1
                else:
                    v, p = _int(b, p, e, _MAX_DIGITS)
                    ints[i, I_BID_VALUE + n] = v
                    if v == 0:
                        ints[i, I_BID_FLAGS] |= 1 << n
            else:
                blind, p = _bool(b, p, e)
                if blind:
                    ints[i, I_BID_FLAGS] |= 1 << (8 + n)
            if p < 0:
                return -1
            p, done = _sep(b, p, e, _RBRACE)
            if done:
                break
        if p < 0 or got & 3 != 3:
            return -1
        n += 1
        p, done = _sep(b, p, e, _RBRACKET)
        if done:
            ints[i, I_N_BIDS] = n
            return p


@_jit
def _tricks_array(b, p, e, i, ints, small, card_lut):
    p, done = _open(b, p, e, _LBRACKET, _RBRACKET)
    ints[i, I_HAS_TRICKS] = 1
    if done:
        return p
    n = 0
    while True:
        if n >= MAX_TRICKS:
            return -1
        p, done = _open(b, p, e, _LBRACE, _RBRACE)
        if done:
            return -1  # leader and cards are required
        got = 0
        small[i, S_TRICK_WINNER + n] = 255
        while True:
            ks, ke, p = _key(b, p, e)
            if p < 0 or p >= e:
                return -1
            if _word(b, ks, ke, _W_LEADER):
                f = 0
            elif _word(b, ks, ke, _W_CARDS):
                f = 1
            elif _word(b, ks, ke, _W_WINNER):
                f = 2
            else:
                return -1
            if (got >> f) & 1:
                return -1
            got |= 1 << f
            if f == 0:
                s, p = _seat(b, p, e)
                small[i, S_LEADER + n] = s
            elif f == 2:
                if b[p] == 110:
                    p = _null(b, p, e)
                else:
                    s, p = _seat(b, p, e)
                    small[i, S_TRICK_WINNER + n] = s
            else:
                p, done = _open(b, p, e, _LBRACKET, _RBRACKET)
                nc = 0
                if not done:
                    while True:
                        cid, p = _card(b, p, e, card_lut)
                        if p < 0 or nc >= 4:
                            return -1
                        small[i, S_CARDS + 4 * n + nc] = cid
                        nc += 1
                        p, done = _sep(b, p, e, _RBRACKET)
                        if done:
                            break
                small[i, S_TRICK_LEN + n] = nc
            if p < 0:
                return -1
            p, done = _sep(b, p, e, _RBRACE)
            if done:
                break
        if p < 0 or got & 3 != 3:
            return -1
        n += 1
        p, done = _sep(b, p, e, _RBRACKET)
        if done:
            ints[i, I_N_TRICKS] = n
            return p


@_jit
def _text(b, p, e, i, field, strs, ints):
    """A text field's string: its place in ``strs``; escapes are marked in ``ints[i, I_ESCAPED]``
    (decoded by :func:`_line` once the line is known to be read here)."""
    q = _string(b, p, e)
    if q < 0:
        if p >= e or b[p] != 34:
            return -1
        q = _escaped_string(b, p, e)
        if q < 0:
            return -1
        ints[i, I_ESCAPED] |= 1 << field
    strs[i, 2 * field] = p + 1
    strs[i, 2 * field + 1] = q - p - 2
    return q


@_jit
def _line(b, p, e, i, key_bytes, key_lens, card_lut, schema_bytes, ints, small, strs):
    """Read line ``i`` (``b[p:e]``); True when it is read here (else the Python parser reads it)."""
    ints[i, I_WINNER] = 255
    for f in range(len(STRING_FIELDS)):
        strs[i, 2 * f + 1] = -1
    p, done = _open(b, _ws(b, p, e), e, _LBRACE, _RBRACE)
    if done:
        return False  # not an object, or {} (required keys missing)
    seen = 0
    while True:
        ks, ke, p = _key(b, p, e)
        if p < 0 or p >= e:
            return False
        k = _top_key(b, ks, ke, key_bytes, key_lens)
        if k < 0:  # an extension key (x_*), stored by _extensions (any number of them); any other: Python's
            if ke - ks < 2 or b[ks] != 120 or b[ks + 1] != 95:
                return False
            k = K_EXT
        elif (seen >> k) & 1:
            return False  # a repeated key
        seen |= 1 << k
        c = b[p]
        if k == K_EXT:
            ints[i, I_EXT_LEN] += 1  # counts the extension keys until _extensions sets the length
            if ints[i, I_EXT_LEN] > MAX_KEYS:
                return False
            if ints[i, I_EXT_LEN] == 1:
                ints[i, I_EXT_FROM] = ks - 1  # _extensions walks the keys from here to I_EXT_TO only
            p = _value(b, p, e, i, ints, np.int64(_EXT_BIT), np.int64(_PY_EXT_BIT))
            ints[i, I_EXT_TO] = p
            ints[i, I_ESCAPED] |= 1 << _EXT_BIT
        elif c == 110:  # null: absent, but not for a required key
            if k == K_GAME or k == K_HAND or k == K_PLAYERS or k == K_DEALER or k == K_BIDS:
                return False
            p = _null(b, p, e)
        elif k == K_SCHEMA:
            q = _string(b, p, e)
            if q < 0 or q - p - 2 != len(schema_bytes):
                return False
            for j in range(len(schema_bytes)):
                if b[p + 1 + j] != schema_bytes[j]:
                    return False
            p = q
        elif k == K_GAME:
            p = _text(b, p, e, i, np.int64(F_GAME), strs, ints)
            if p < 0 or strs[i, 2 * F_GAME + 1] == 0 or _space_first(b, strs[i, 2 * F_GAME], p):
                return False  # empty, or maybe blank: the Python parser tells a blank game_id from a padded one
        elif k == K_EVENT:
            p = _text(b, p, e, i, np.int64(F_EVENT), strs, ints)
        elif k == K_DATE:
            p = _text(b, p, e, i, np.int64(F_DATE), strs, ints)
        elif k == K_TABLE:
            p = _text(b, p, e, i, np.int64(F_TABLE), strs, ints)
        elif k == K_ROUND:
            p = _text(b, p, e, i, np.int64(F_ROUND), strs, ints)
        elif k == K_RULES:
            if c == 34:
                p = _text(b, p, e, i, np.int64(F_RULES), strs, ints)
                ints[i, I_RULES_KIND] = 1
            else:
                q = _value(b, p, e, i, ints, np.int64(_SPACED_BIT), np.int64(_PY_RULES_BIT)) if c == 123 else -1
                if q < 0:
                    return False
                strs[i, 2 * F_RULES] = p
                strs[i, 2 * F_RULES + 1] = q - p
                ints[i, I_RULES_KIND] = 2
                p = q
        elif k == K_HAND:
            v, p = _int(b, p, e, _MAX_DIGITS)
            if v < 1:
                return False
            ints[i, I_HAND] = v
        elif k == K_DEALER:
            s, p = _seat(b, p, e)
            ints[i, I_DEALER] = s
        elif k == K_WINNER:
            s, p = _side(b, p, e)
            ints[i, I_WINNER] = s
        elif k == K_PLAYERS:
            p = _seat_object(b, p, e, i, _PLAYERS, ints, small, strs, card_lut)
        elif k == K_TAKEN:
            p = _seat_object(b, p, e, i, _TAKEN, ints, small, strs, card_lut)
        elif k == K_DEAL:
            ints[i, I_HAS_DEAL] = 1
            p = _seat_object(b, p, e, i, _DEAL, ints, small, strs, card_lut)
        elif k == K_SCORE_BEFORE:
            p = _before_object(b, p, e, i, np.int64(0), ints)
        elif k == K_BAGS_BEFORE:
            p = _before_object(b, p, e, i, np.int64(2), ints)
        elif k == K_SCORE:
            p = _score_object(b, p, e, i, ints)
        elif k == K_BIDS:
            p = _bids_array(b, p, e, i, ints, small)
        else:  # K_TRICKS
            p = _tricks_array(b, p, e, i, ints, small, card_lut)
        if p < 0:
            return False
        p, done = _sep(b, p, e, _RBRACE)
        if p < 0:
            return False
        if done:
            break
    if _ws(b, p, e) != e:
        return False  # text after the object
    required = (1 << K_GAME) | (1 << K_HAND) | (1 << K_PLAYERS) | (1 << K_DEALER) | (1 << K_BIDS)
    if seen & required != required:
        return False
    return True


@_jit
def _skip_value(b, p, e):
    """Past any JSON value at ``p`` of a line already read (strings, numbers, literals, nested
    arrays and objects); the position after it."""
    depth = 0
    while p < e:
        c = b[p]
        if c == 34:  # a string, escapes included
            p += 1
            while b[p] != 34:
                p += 2 if b[p] == 92 else 1
            p += 1
        elif c == 123 or c == 91:
            depth += 1
            p += 1
        elif c == 125 or c == 93:
            if depth == 0:
                return p
            depth -= 1
            p += 1
        elif c == 44 and depth == 0:
            return p
        elif depth == 0 and (c == 32 or c == 9 or c == 13):
            return p
        else:
            p += 1
    return p


@_jit
def _copy_compact(b, p, end, x, w):
    """Copy ``b[p:end]`` (strings without escapes, so every quote opens or closes one) to ``x[w:]``
    without the whitespace outside strings; the position after it in ``x``.  ``x`` may be ``b``
    itself with ``w <= p`` (the copy never overtakes what it reads)."""
    inside = False
    for r in range(p, end):
        c = b[r]
        if c == 34:
            inside = not inside
        elif not inside and (c == 32 or c == 9 or c == 13):
            continue
        x[w] = c
        w += 1
    return w


@_jit
def _extensions(b, p, e, x, raw, first, last):
    """The extension keys of line ``b[p:e]`` (read by :func:`_line`) as orjson writes the Python
    loader's ``extras``: ``{"x_a":1,"x_b":"s"}`` in the line's order, written to ``x`` from ``p`` on
    (never longer than the line).  Its length, or -1 for a repeated extension key (orjson keeps
    the last one: the line is the Python parser's).  ``raw``: each key and value copied as written
    (repeated keys too), for orjson to read and write back.  ``first``, ``last``: where the line's
    first extension key starts and its last extension value ends (:func:`_line` notes them), so
    the keys before and after them are not walked again."""
    w = p
    x[w] = 123
    w += 1
    q = first
    keys = 0
    nested = False
    while True:
        q = _ws(b, q, e)
        ks, ke, v = _key(b, q, e)
        end = _skip_value(b, v, e)
        if ke - ks >= 2 and b[ks] == 120 and b[ks + 1] == 95:
            if w > p + 1:
                x[w] = 44
                w += 1
            keys += 1
            if raw:
                for r in range(q, end):
                    x[w] = b[r]
                    w += 1
            elif b[v] == 34:  # a string (no escapes here): the key compacted, the string as it is
                w = _copy_compact(b, q, v, x, w)
                x[w : w + end - v] = b[v:end]
                w += end - v
            else:
                nested = nested or b[v] == 123 or b[v] == 91
                w = _copy_compact(b, q, end, x, w)
        q = _ws(b, end, e)
        if end >= last or b[q] != 44:
            break
        q += 1
    x[w] = 125
    if not raw and (keys > 1 or nested) and not _distinct_keys(x, p, w + 1):
        return -1  # an extension key written twice
    return w + 1 - p


@_jit
def _settle_texts(b, p, e, i, ints, strs, x):
    """Line ``i`` (``b[p:e]``) is read here: its texts in the block become what the Python parser
    gives, its extensions go to ``x``.  False when the line is the Python parser's after all (a
    repeated extension key), found before anything is changed."""
    escaped = ints[i, I_ESCAPED]
    if (escaped >> _EXT_BIT) & 1 and not (escaped >> _PY_EXT_BIT) & 1:  # (else orjson's, written already)
        n = _extensions(b, p, e, x, _STRICT, ints[i, I_EXT_FROM], ints[i, I_EXT_TO])
        if n < 0:
            return False
        ints[i, I_EXT_LEN] = n
    if (escaped >> _SPACED_BIT) & 1 and not (escaped >> _PY_RULES_BIT) & 1:  # orjson's text of the rules object
        st = strs[i, 2 * F_RULES]
        strs[i, 2 * F_RULES + 1] = _copy_compact(b, st, st + strs[i, 2 * F_RULES + 1], b, st) - st  # in place
    for f in range(N_TEXT):
        if (escaped >> f) & 1:
            strs[i, 2 * f + 1] = _unescape(b, strs[i, 2 * f], strs[i, 2 * f + 1])
    return True


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _scan_lines(b, starts, ends, key_bytes, key_lens, card_lut, schema_bytes, status, ints, small, strs, xbuf):
    # a plain loop over views that are not reference-counted (see _unmanaged); the threads are
    # scan's, not numba's: a prange cost about 2 CPU-seconds of first compile (its gufunc and
    # two wrappers each linked and optimised the whole reader again)
    b, key_bytes, key_lens, card_lut, schema_bytes = (
        _unmanaged(b), _unmanaged(key_bytes), _unmanaged(key_lens), _unmanaged(card_lut), _unmanaged(schema_bytes)
    )
    ints, small, strs, xbuf = _unmanaged(ints), _unmanaged(small), _unmanaged(strs), _unmanaged(xbuf)
    for i in range(len(starts)):
        p, e = starts[i], ends[i]
        while e > p and b[e - 1] == 13:
            e -= 1  # the Python reader strips trailing CRs
        q = _ws(b, p, e)
        if q == e:
            status[i] = BLANK
            continue
        if not _line(b, p, e, i, key_bytes, key_lens, card_lut, schema_bytes, ints, small, strs):
            status[i] = PYTHON
        elif (ints[i, I_ESCAPED] >> _PY_EXT_BIT) & 3:
            # orjson writes the rules' or the extensions' text first (all the extensions then:
            # _settle_texts must not fail once the rules' text is written in place)
            status[i] = _SETTLE
            if (ints[i, I_ESCAPED] >> _EXT_BIT) & 1:
                ints[i, I_ESCAPED] |= 1 << _PY_EXT_BIT
                ints[i, I_EXT_LEN] = _extensions(b, p, e, xbuf, _RAW, ints[i, I_EXT_FROM], ints[i, I_EXT_TO])
        elif ints[i, I_ESCAPED] and not _settle_texts(b, p, e, i, ints, strs, xbuf):
            status[i] = PYTHON  # (rare, and kept out of _line: its size there cost 5-10% of the scan)
        else:
            status[i] = OK


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _settle_lines(b, starts, ends, idx, ints, strs, xbuf, status):
    """:func:`_settle_texts` for the lines ``idx`` whose rules' or extensions' text orjson wrote."""
    for i in idx:
        p, e = starts[i], ends[i]
        while e > p and b[e - 1] == 13:
            e -= 1
        _settle_texts(b, p, e, i, ints, strs, xbuf)  # never False: orjson wrote the extensions
        status[i] = OK


class _Repeated(ValueError):
    """A key given twice in one object: the Python parser rejects the line (``jsontext.repeated_key``)."""


def _rewritten(text: bytes) -> bytes:
    """JSON text as the Python loader stores it (orjson's, whole numbers exact); raises
    :class:`_Repeated` for a key given twice in one object, which the Python parser rejects."""
    from spadework.parsers.jsontext import repeated_key

    obj = jsontext.loads(text)
    if repeated_key(text, obj) is not None:
        raise _Repeated(text)
    return jsontext.dumps(obj).encode()


def _settle_in_python(buf, starts, ends, status, ints, strs, xbuf) -> None:
    """Lines marked :data:`_SETTLE`: orjson reads their ``rules`` object (in the block) and their
    extensions (copied as written to ``xbuf``) and writes them back as the Python loader stores
    them, in place; then their other texts are settled.  A line orjson refuses (not JSON, a lone
    surrogate, a number out of its range) or whose text would grow past its place goes to the
    Python parser, untouched."""
    todo = np.flatnonzero(status == _SETTLE)
    done = []
    for i in todo.tolist():
        bits = int(ints[i, I_ESCAPED])
        st, rs, rn = int(starts[i]), int(strs[i, 2 * F_RULES]), int(strs[i, 2 * F_RULES + 1])
        try:
            ext = _rewritten(xbuf[st : st + ints[i, I_EXT_LEN]].tobytes()) if (bits >> _PY_EXT_BIT) & 1 else None
            rules = _rewritten(buf[rs : rs + rn].tobytes()) if (bits >> _PY_RULES_BIT) & 1 else None
        except (orjson.JSONDecodeError, TypeError, _Repeated):
            status[i] = PYTHON
            continue
        if (ext is not None and len(ext) > ends[i] - st) or (rules is not None and len(rules) > rn):
            status[i] = PYTHON  # (1e9 is 1000000000.0 to orjson: longer than written)
            continue
        if ext is not None:
            xbuf[st : st + len(ext)] = np.frombuffer(ext, np.uint8)
            ints[i, I_EXT_LEN] = len(ext)
        if rules is not None:
            buf[rs : rs + len(rules)] = np.frombuffer(rules, np.uint8)
            strs[i, 2 * F_RULES + 1] = len(rules)
        done.append(i)
    if done:
        _settle_lines(buf, starts, ends, np.array(done, np.int64), ints, strs, xbuf, status)


# --- a JSON document holding an array of hands ---------------------------------------------------


def array_items(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The items of a JSON document that is one array of objects (a ``.json`` log, FORMATS.md
    section 1): ``(starts, ends)`` (int64, byte offsets in ``buf``, each item from its ``{`` to its
    ``}``), with every newline between tokens of an item turned into a space in ``buf`` (so the items
    read as lines).  ``None`` unless the whole document is such an array: whitespace, ``[``, objects
    separated by commas, ``]``, whitespace (no byte-order mark, no empty array, no trailing comma, no
    control character in a string, brackets that balance).  Whether each item is a valid object is the
    scanner's to say; a document the reference would refuse as a whole must have an item the
    scanner does not read (the caller then gives the file to the Python parser)."""
    n = _array_items(buf, starts := np.empty(len(buf) // 2 + 1, np.int64), ends := np.empty(len(buf) // 2 + 1, np.int64))
    return None if n <= 0 else (starts[:n], ends[:n])


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _array_items(b, starts, ends):
    n = len(b)
    p = _skip_json_ws(b, 0, n)
    if p >= n or b[p] != 91:  # [
        return -1
    p = _skip_json_ws(b, p + 1, n)
    k = 0
    while p < n and b[p] == 123:  # { an item
        starts[k] = p
        depth = 0
        inside = False
        while p < n:
            c = b[p]
            if inside:
                if c == 92:  # backslash: the next byte is escaped
                    p += 1
                elif c == 34:
                    inside = False
                elif c < 32:
                    return -1  # a control character in a string: the whole document is not JSON
            elif c == 34:
                inside = True
            elif c == 123 or c == 91:
                depth += 1
            elif c == 125 or c == 93:
                depth -= 1
                if depth == 0:
                    break
            elif c == 10:
                b[p] = 32  # a newline between tokens: the scanner's whitespace is space, tab and CR
            p += 1
        if p >= n or b[p] != 125:
            return -1
        ends[k] = p + 1
        k += 1
        p = _skip_json_ws(b, p + 1, n)
        if p < n and b[p] == 44:  # , then the next item
            p = _skip_json_ws(b, p + 1, n)
            if p >= n or b[p] != 123:
                return -1
        elif p < n and b[p] == 93:  # ] the end
            if _skip_json_ws(b, p + 1, n) != n:
                return -1
            return k
        else:
            return -1
    return -1


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _skip_json_ws(b, p, n):
    while p < n and (b[p] == 32 or b[p] == 10 or b[p] == 13 or b[p] == 9):
        p += 1
    return p


__all__ = ["BLANK", "MAX_BIDS", "MAX_DEALT", "MAX_TRICKS", "OK", "PYTHON", "STRING_FIELDS", "Scan", "array_items", "scan"]


# --- the scan as hand_records rows -------------------------------------------------------------


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _gather_text(buf, starts, lens, default, out_offsets, out_data):
    """Copy each text ``buf[starts[j]:starts[j] + lens[j]]`` (``default`` where ``lens[j] < 0`` and
    ``default`` is not empty) one after another into ``out_data``; fills ``out_offsets``."""
    pos = 0
    for j in range(len(starts)):
        out_offsets[j] = pos
        n = lens[j]
        if n < 0:
            for k in range(len(default)):
                out_data[pos + k] = default[k]
            pos += len(default)
        else:
            s = starts[j]
            for k in range(n):
                out_data[pos + k] = buf[s + k]
            pos += n
    out_offsets[len(starts)] = pos


def _text_column(buf: np.ndarray, starts: np.ndarray, lens: np.ndarray, default: bytes | None = None):
    import pyarrow as pa

    d = np.frombuffer(default or b"", np.uint8)
    if default is None:
        total = int(lens[lens > 0].sum())
    else:
        total = int(np.where(lens < 0, len(d), lens).sum())
    offsets = np.empty(len(starts) + 1, np.int32)
    data = np.empty(total, np.uint8)
    _gather_text(buf, starts, lens, d, offsets, data)
    valid = None
    if default is None and (lens < 0).any():
        valid = pa.py_buffer(np.packbits(lens >= 0, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), len(starts), [valid, pa.py_buffer(offsets), pa.py_buffer(data)])


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _pack_lists(idx, ints, small, deal_off, deal, play_off, play, tricks_off, tricks, bid_off, bid_seat, bid_value, bid_nil, bid_blind):
    """The packed lists of ``hand_records`` (schema.PACKING) for the lines ``idx``: each list's values
    one line after another and its offsets (``*_off[j]`` .. ``*_off[j + 1]``)."""
    nd = npl = ntr = nbd = 0
    for j in range(len(idx)):
        i = idx[j]
        deal_off[j], play_off[j], tricks_off[j], bid_off[j] = nd, npl, ntr, nbd
        nt = ints[i, I_N_TRICKS]
        if ints[i, I_HAS_DEAL]:
            for s in range(4):
                for k in range(small[i, S_DEAL_LEN + s]):
                    deal[nd] = small[i, S_DEAL + s * MAX_DEALT + k] | s << 6 | (k + 1) << 8
                    nd += 1
        elif ints[i, I_HAS_TRICKS] and nt == 13:  # the deal is what each seat played, if the play is complete
            complete = True
            for t in range(13):
                if small[i, S_TRICK_LEN + t] != 4:
                    complete = False
            if complete:
                for s in range(4):
                    order = 1
                    for t in range(13):
                        k = (s - small[i, S_LEADER + t]) & 3
                        deal[nd] = small[i, S_CARDS + 4 * t + k] | s << 6 | order << 8
                        nd += 1
                        order += 1
        for t in range(nt):
            lead = small[i, S_LEADER + t]
            w = small[i, S_TRICK_WINNER + t]
            tricks[ntr] = lead | (4 if w == 255 else w) << 2 | (t + 1) << 5
            ntr += 1
            for k in range(small[i, S_TRICK_LEN + t]):
                play[npl] = small[i, S_CARDS + 4 * t + k] | ((lead + k) & 3) << 6 | (k + 1) << 8 | (t + 1) << 11
                npl += 1
        for k in range(ints[i, I_N_BIDS]):
            bid_seat[nbd] = small[i, S_BID_SEAT + k]
            bid_value[nbd] = ints[i, I_BID_VALUE + k]
            bid_nil[nbd] = (ints[i, I_BID_FLAGS] >> k) & 1
            bid_blind[nbd] = (ints[i, I_BID_FLAGS] >> (8 + k)) & 1
            nbd += 1
    n = len(idx)
    deal_off[n], play_off[n], tricks_off[n], bid_off[n] = nd, npl, ntr, nbd


def _list(offsets: np.ndarray, values: np.ndarray, typ, valid: np.ndarray | None):
    import pyarrow as pa

    mask = None if valid is None or valid.all() else pa.array(~valid)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, type=typ), mask=mask)


def hand_columns(buf: np.ndarray, s: Scan, idx: np.ndarray) -> dict:
    """The ``hand_records`` columns (Arrow arrays, every column but ``source_file``) of the lines
    ``idx`` (read here: ``s.status[idx] == OK``), exactly as :func:`spadework.parsers.db.hand_row`
    writes them for the records the Python parser reads from those lines."""
    import pyarrow as pa

    n = len(idx)
    I = s.ints[idx]  # noqa: E741
    cols: dict[str, pa.Array] = {}
    st, ln = s.str_start[idx], s.str_len[idx]
    for f, name in enumerate(STRING_FIELDS):
        cols[name] = _text_column(buf, st[:, f], ln[:, f], b"standard" if f == F_RULES else None)
    cols["hand"] = pa.array(I[:, I_HAND].astype(np.int32))
    cols["rules_is_object"] = pa.array(I[:, I_RULES_KIND] == 2)
    cols["dealer"] = pa.array(I[:, I_DEALER].astype(np.uint8))
    w = I[:, I_WINNER]
    cols["winner"] = pa.array(w.astype(np.uint8), mask=w == 255)
    taken_set = s.taken_set[idx]
    taken_any = taken_set.any(axis=1)
    for k, seat in enumerate("nesw"):
        cols[f"taken_{seat}"] = pa.array(I[:, I_TAKEN + k].astype(np.int32), mask=~taken_set[:, k])
    cols["has_deal"] = pa.array(I[:, I_HAS_DEAL] == 1)
    cols["has_tricks"] = pa.array(I[:, I_HAS_TRICKS] == 1)
    ext_len = np.where((I[:, I_ESCAPED] >> _EXT_BIT) & 1 == 1, I[:, I_EXT_LEN], -1)
    if s.xbuf is not None and (ext_len >= 0).any():
        at = np.stack([s.starts[idx], ext_len], axis=1)  # columns of a 2-d array, as the other texts
        cols["extras"] = _text_column(s.xbuf, at[:, 0], at[:, 1])
    else:
        cols["extras"] = pa.nulls(n, pa.string())
    score_set = s.score_set[idx]
    for k, name in enumerate(("points_ns", "total_ns", "bags_ns", "points_ew", "total_ew", "bags_ew")):
        cols[name] = pa.array(I[:, I_SCORE + k].astype(np.int32), mask=~score_set[:, k])
    before_set = s.before_set[idx]
    for k, name in enumerate(("score_before_ns", "score_before_ew", "bags_before_ns", "bags_before_ew")):
        cols[name] = pa.array(I[:, I_BEFORE + k].astype(np.int32), mask=~before_set[:, k])
    del taken_any
    deal_off = np.empty(n + 1, np.int32)
    play_off = np.empty(n + 1, np.int32)
    tricks_off = np.empty(n + 1, np.int32)
    bid_off = np.empty(n + 1, np.int32)
    deal = np.empty(n * 4 * MAX_DEALT, np.uint32)
    play = np.empty(n * 4 * MAX_TRICKS, np.uint16)
    tricks = np.empty(n * MAX_TRICKS, np.uint16)
    bid_seat = np.empty(n * MAX_BIDS, np.uint8)
    bid_value = np.empty(n * MAX_BIDS, np.float64)
    bid_nil = np.empty(n * MAX_BIDS, np.bool_)
    bid_blind = np.empty(n * MAX_BIDS, np.bool_)
    _pack_lists(idx, s.ints, s.small, deal_off, deal, play_off, play, tricks_off, tricks, bid_off, bid_seat, bid_value, bid_nil, bid_blind)
    has_deal = np.diff(deal_off) > 0
    has_deal |= I[:, I_HAS_DEAL] == 1
    has_tricks = I[:, I_HAS_TRICKS] == 1
    nb_ = bid_off[-1]
    cols["bid_seats"] = _list(bid_off, bid_seat[:nb_], pa.uint8(), None)
    cols["bid_values"] = _list(bid_off, bid_value[:nb_], pa.float64(), None)
    cols["bid_nils"] = _list(bid_off, bid_nil[:nb_], pa.bool_(), None)
    cols["bid_blinds"] = _list(bid_off, bid_blind[:nb_], pa.bool_(), None)
    cols["deal"] = _list(deal_off, deal[: deal_off[-1]], pa.uint32(), has_deal)
    cols["play"] = _list(play_off, play[: play_off[-1]], pa.uint16(), has_tricks)
    cols["tricks"] = _list(tricks_off, tricks[: tricks_off[-1]], pa.uint16(), has_tricks)
    return cols
