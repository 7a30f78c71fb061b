"""Hand kernels (caishen.sim.hand) against the external shanten data and a slow reference."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

from caishen.sim import hand, readings, tiles
from caishen.sim.tiles import CAISHEN, parse

import hand_reference as ref
import shared_data

SHANTEN_DATA = shared_data.path("data", "shanten")
FILES = ["p_normal_10000.txt", "p_hon_10000.txt", "p_tin_10000.txt", "p_koku_10000.txt"]


def load_cases(name):
    path = shared_data.require("data", "shanten", name)  # $CAISHEN_SHARED or ../shared
    rows = np.loadtxt(path, dtype=np.int64)
    counts = np.zeros((len(rows), 34), np.uint8)
    for r, row in enumerate(rows):
        for k in row[:14]:
            counts[r, k] += 1
    return counts, rows[:, 14], rows[:, 16]


# ------------------------------------------------------------ external data


@pytest.mark.parametrize("name", FILES)
def test_external_standard_shanten(name):
    """All 40,000 external cases: standard-form shanten, exactly."""
    counts, std, _ = load_cases(name)
    got = np.array([hand.shanten_standard(c) for c in counts[:50]])
    assert (got == std[:50]).all()
    from caishen.sim.hand import _shanten_standard_batch
    from caishen.sim.tables import hand_tables

    out = np.empty(len(counts), np.int8)
    _shanten_standard_batch(counts, -1, hand_tables(), out)
    bad = np.flatnonzero(out != std)
    assert bad.size == 0, f"{bad.size} mismatches, first {tiles.to_str(counts[bad[0]])}: {out[bad[0]]} != {std[bad[0]]}"


@pytest.mark.parametrize("name", FILES)
def test_external_seven_pairs(name):
    """Column 3 is the Japanese seven pairs (a four of a kind is one pair, kinds must
    differ).  Our rules count four of a kind as two pairs (K-6.3, J-5.1), so the
    two agree exactly on hands where no kind is held three or four times; on the
    others the Japanese value can only be higher."""
    counts, _, seven_jp = load_cases(name)
    ours = np.array([hand.shanten_seven_pairs(c) for c in counts])
    simple = (counts <= 2).all(axis=1)
    assert simple.sum() > 1000
    assert (ours[simple] == seven_jp[simple]).all()
    assert (ours <= seven_jp).all()


def test_external_japanese_mode_helper():
    """The Japanese seven-pairs formula rebuilt from our pair counts matches column 3 everywhere."""
    for name in FILES:
        counts, _, seven_jp = load_cases(name)
        pairs = (counts >= 2).sum(axis=1)
        kinds = (counts >= 1).sum(axis=1)
        jp = 6 - pairs + np.maximum(0, 7 - kinds)
        assert (jp == seven_jp).all()


# ------------------------------------------------------------ examples


@pytest.mark.parametrize(
    "s, joker, expected",
    [
        ("123m456p789s111z22z", -1, -1),
        ("123m456p789s11z22z", -1, 0),
        ("123m456p789s23s55z", CAISHEN, 0),
        ("123m456p789s234s5z5z", CAISHEN, -1),
        ("5z5z5z5z", CAISHEN, 0),  # 4 tiles: 3m+1 with m=1
        ("5z5z5z5z1m", CAISHEN, -1),
        ("11m22m33p44p55s66s7z", -1, 0),
        ("1111m22m33p44p55s66s", -1, -1),  # four of a kind = two pairs
        ("19m19p19s1234567z", -1, 6),
    ],
)
def test_shanten_examples(s, joker, expected):
    assert hand.shanten(parse(s), joker) == expected


def test_waits_and_effective_tiles():
    c = parse("123m456p789s23s11z")
    assert hand.waits(c) == [tiles.parse_kinds("1s")[0], tiles.parse_kinds("4s")[0]]
    eff = dict(hand.effective_tiles(c, visible=parse("1s1s4s")))
    assert eff == {18: 2, 21: 3}
    # with jokers every kind completes a hand holding two spare 财神
    assert hand.waits(parse("123m456p789s23s55z"), CAISHEN) == list(range(34))


def test_is_baotou_examples_K_6_2():
    assert hand.is_baotou(parse("123m456m789p234s5z"), CAISHEN)
    assert hand.is_baotou(parse("123m456m789p23s5z5z"), CAISHEN)  # second joker wild in a set
    assert not hand.is_baotou(parse("123m456m789p235s5z"), CAISHEN)
    assert not hand.is_baotou(parse("123m456m789p234s5s"), CAISHEN)  # no joker
    assert hand.is_baotou(parse("123m5z"), CAISHEN)  # with three melds declared


@pytest.mark.parametrize(
    "bad",
    [np.zeros(33, np.uint8), np.full(34, 5, np.uint8), parse("123m"), parse("123m456p789s11z22z3z4z"), parse("123m456p789s111z22z3z")],
)
def test_bad_input(bad):
    with pytest.raises(ValueError):
        hand.shanten(bad)


def test_bad_joker_and_size():
    with pytest.raises(ValueError, match="joker"):
        hand.shanten(parse("1m"), joker=34)
    with pytest.raises(ValueError, match="3m\\+2"):
        hand.is_win(parse("1m"))
    with pytest.raises(ValueError, match="3m\\+1"):
        hand.waits(parse("11m"))
    with pytest.raises(ValueError, match="row 1"):
        hand.shanten_batch(np.stack([parse("1m"), parse("12m3m")]))


@pytest.mark.parametrize(
    "s, bad",
    [("0m", "0m"), ("8z", "8z"), ("11111m", "fifth"), ("12x3m", "x"), ("123", "123"), ("m", "m")],
)
def test_parse_errors(s, bad):
    with pytest.raises(ValueError, match=bad):
        tiles.parse(s)


def test_parse_roundtrip():
    for s in ["123m456p11z5z", "19m19p19s1234567z", "5555z"]:
        assert tiles.to_str(tiles.parse(s)) == tiles.to_str(tiles.parse(tiles.to_str(tiles.parse(s))))
    assert tiles.to_str(tiles.parse("5z1m")) == "1m5z"


# ------------------------------------------------------------ bad input: bools, None, fractions (issue 9)

#: not tile kinds: Python counts True as 1, numpy's bool too; None and fractions are no index
NOT_KINDS = [True, False, np.True_, np.bool_(False), None, 1.5, np.float64(0.5), float("nan"), "5z"]
H13 = "123m456p789s23s11z"
H14 = "123m456p789s23s11z4s"


def _joker_calls():
    """(name, call(joker)) for every public function of caishen.sim.hand that takes a joker."""
    c13, c14 = parse(H13), parse(H14)
    return [
        ("shanten", lambda j: hand.shanten(c13, j)),
        ("shanten_standard", lambda j: hand.shanten_standard(c13, j)),
        ("shanten_seven_pairs", lambda j: hand.shanten_seven_pairs(c13, j)),
        ("is_win", lambda j: hand.is_win(c14, j)),
        ("is_win_standard", lambda j: hand.is_win_standard(c14, j)),
        ("is_seven_pairs", lambda j: hand.is_seven_pairs(c14, j)),
        ("is_baotou", lambda j: hand.is_baotou(c13, j)),
        ("waits", lambda j: hand.waits(c13, j)),
        ("effective_tiles", lambda j: hand.effective_tiles(c13, j)),
        ("readings", lambda j: readings.readings(c14, j)),
        ("shanten_batch", lambda j: hand.shanten_batch(np.stack([c13, c14]), j)),
        ("is_win_batch", lambda j: hand.is_win_batch(np.stack([c13, c14]), j)),
        ("effective_tiles_batch", lambda j: hand.effective_tiles_batch(np.stack([c13]), j)),
        ("shanten_after_draws", lambda j: hand.shanten_after_draws(c13, j)),
        ("shanten_after_discards", lambda j: hand.shanten_after_discards(c14, j)),
        ("describe", lambda j: hand.describe(c13, j)),
        ("check_joker", lambda j: tiles.check_joker(j)),
    ]


@pytest.mark.parametrize("bad", NOT_KINDS, ids=repr)
def test_joker_must_be_an_integer_kind(bad):
    """joker=False is not 1m and joker=True not 2m; None gives ValueError, not TypeError."""
    for name, call in _joker_calls():
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            call(bad)
    assert hand.shanten(parse(H13), np.int64(-1)) == hand.shanten(parse(H13)) == 0  # numpy ints are fine
    assert hand.shanten(parse(H13), 31.0) == 0  # so is an integral float


def _counts_calls():
    """(name, call(counts)) for every public function of caishen.sim.hand and caishen.sim.tiles that takes counts."""
    return [
        ("shanten", hand.shanten),
        ("shanten_standard", hand.shanten_standard),
        ("shanten_seven_pairs", hand.shanten_seven_pairs),
        ("waits", hand.waits),
        ("effective_tiles", hand.effective_tiles),
        ("effective_tiles visible", lambda c: hand.effective_tiles(parse(H13), visible=c)),
        ("is_baotou", lambda c: hand.is_baotou(c, CAISHEN)),
        ("shanten_after_draws", hand.shanten_after_draws),
        ("describe", hand.describe),
        ("describe visible", lambda c: hand.describe(parse(H13), visible=c)),
        ("shanten_batch", lambda c: hand.shanten_batch([c])),
        ("is_win_batch", lambda c: hand.is_win_batch([c])),
        ("effective_tiles_batch", lambda c: hand.effective_tiles_batch([c])),
        ("to_str", tiles.to_str),
        ("check_counts", tiles.check_counts),
    ]


@pytest.mark.parametrize("bad", [True, np.True_, None, 1.5, 1.0, "1"], ids=repr)
def test_counts_must_be_integers(bad):
    """A 13-tile hand written as a list whose first count is ``bad``: numpy would read
    [True, 1, ...] as integers, so each element is looked at."""
    for name, call in _counts_calls():
        c = [int(x) for x in parse(H13)]
        c[0] = bad
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            call(c)
    for call in (hand.shanten, hand.shanten_batch, tiles.check_counts):  # bool and float arrays
        for dtype in (bool, float):
            a = np.zeros((1, 34) if call is hand.shanten_batch else 34, dtype)
            with pytest.raises(ValueError, match=np.dtype(dtype).name):
                call(a)


@pytest.mark.parametrize(
    "call, bad",
    [
        (tiles.kind_name, True),
        (tiles.kind_name, None),
        (tiles.kind_name, 1.5),
        (tiles.kind_name, 34),
        (tiles.suit_of, np.True_),
        (tiles.rank_of, None),
        (tiles.is_suited, 2.5),
        (tiles.is_suited, -1),
        (tiles.check_kind, "1m"),
        (lambda k: tiles.kinds_to_str([0, k]), False),
        (lambda r: tiles.kind_index(r, "m"), True),
        (lambda r: tiles.kind_index(r, "m"), 0),
        (lambda r: tiles.kind_index(r, "z"), 8),
        (lambda s: tiles.kind_index(1, s), "x"),
    ],
)
def test_tile_kind_functions_reject_non_kinds(call, bad):
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        call(bad)


def test_tile_kind_functions_accept_numpy_integers():
    assert tiles.kind_name(np.uint8(31)) == "5z" and tiles.kind_name(np.int64(0)) == "1m"
    assert tiles.suit_of(np.int32(30)) == 3 and tiles.rank_of(17) == 9 and tiles.is_suited(26)
    assert tiles.kind_index(9, "p") == 17 and tiles.kinds_to_str(np.array([31, 0])) == "1m5z"


# ------------------------------------------------------------ impossible visible counts (issue 9)


@pytest.mark.parametrize(
    "argv, kind",
    [
        (["123456789m123p45s", "--visible", "1111m4444s"], "1m"),  # 3m+2: was answered, clipping the visible counts
        (["123456789m123p45s", "--visible", "4444s"], "4s"),
        (["123456789m123p45s", "--visible", "4444s", "--joker", "5z"], "4s"),
        (["123456789m123p4s", "--visible", "1111m"], "1m"),  # 3m+1: rejected before too
    ],
)
def test_hand_cli_rejects_more_than_four_held_and_visible(argv, kind, capsys):
    from caishen.cli import main

    with pytest.raises(SystemExit) as e:
        main(["hand", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"{kind}: " in err and "visible is more than 4" in err


def test_describe_rejects_more_than_four_held_and_visible():
    with pytest.raises(ValueError, match="9m: 1 held \\+ 4 visible"):
        hand.describe(parse("123456789m123p45s"), visible=parse("9999m"))
    ok = hand.describe(parse("123456789m123p45s"), visible=parse("999m4444p"))
    assert ok["discards"][0]["discard"] == "4s"


def test_describe_discarded_copy_is_not_live():
    """After a discard its copy lies in the discards: a complete hand throwing 1s
    waits on 1s with 2 live copies (4 - 1 held - 1 thrown), not 3."""
    info = hand.describe(parse("123456789m123p11s"))
    throw_1s = next(o for o in info["discards"] if o["discard"] == "1s")
    assert throw_1s["effective"] == [("1s", 2)]
    throw_1m = next(o for o in info["discards"] if o["discard"] == "1m")
    assert dict(throw_1m["effective"]) == {"1m": 3, "4m": 3, "7m": 3}


# ------------------------------------------------------------ long bad input is cut (issue 9)


def test_parse_error_cuts_long_input():
    """A 5 MB bad tile string is not echoed back whole: the first characters and the length."""
    for bad in ("x" * 5_000_000, "1m" * 2_500_000 + "q", "123m" + "0" * 5_000_000 + "m"):
        for fn in (tiles.parse, tiles.parse_kinds):
            with pytest.raises(ValueError) as e:
                fn(bad)
            msg = str(e.value)
            assert len(msg) < 300, len(msg)
            assert f"{len(bad):,} characters" in msg
    with pytest.raises(ValueError) as e:
        tiles.parse_kinds(list(range(1_000_000)))
    assert len(str(e.value)) < 300
    with pytest.raises(ValueError, match="'12x3m': cannot read '12x'"):  # short input stays whole
        tiles.parse("12x3m")


# ------------------------------------------------------------ hypothesis vs reference


@st.composite
def hands(draw, sizes=(1, 2, 4, 5, 7, 8, 10, 11, 13, 14), joker=CAISHEN, max_jokers=4, complete_bias=True, fours=False):
    """A hand of a legal size, 0..max_jokers jokers, from the 136-tile set.

    Half the time it is built from random sets + a pair (then some tiles
    replaced), so that complete and ready hands are common.  ``fours``:
    the hand mostly holds one to three kinds four times, often in one suit
    with the honors (where a fifth copy would matter most)."""
    n = draw(st.sampled_from(sizes))
    k = draw(st.integers(0, min(max_jokers, n))) if joker >= 0 else 0
    counts = Counter()
    if joker >= 0:
        counts[joker] = k
    pool = [t for t in range(34) if t != joker]
    if fours:
        if draw(st.booleans()):  # one suit and the honors
            suit = draw(st.integers(0, 2))
            pool = [t for t in pool if t // 9 == suit or t >= 27]
        n_fours = draw(st.sampled_from([1, 1, 1, 2, 2, 3, 0]))
        for t in draw(st.lists(st.sampled_from(pool), min_size=n_fours, max_size=n_fours, unique=True)):
            if sum(counts.values()) + 4 <= n:
                counts[t] = 4
    if complete_bias and draw(st.booleans()):
        groups = []
        while sum(counts.values()) < n:
            g = draw(
                st.sampled_from(["run", "triplet", "pair", "single"])
                if n - sum(counts.values()) >= 3
                else st.sampled_from(["pair", "single"])
            )
            t = draw(st.sampled_from(pool))
            if g == "run":
                if t >= 27 or t % 9 > 6:
                    continue
                add = [t, t + 1, t + 2]
            else:
                add = [t] * {"triplet": 3, "pair": 2, "single": 1}[g]
            add = add[: n - sum(counts.values())]
            if all(counts[x] + add.count(x) <= 4 for x in add):
                for x in add:
                    counts[x] += 1
                groups.append(g)
    else:
        while sum(counts.values()) < n:
            t = draw(st.sampled_from(pool))
            if counts[t] < 4:
                counts[t] += 1
    c = np.zeros(34, np.uint8)
    for t, v in counts.items():
        c[t] = v
    return c


SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large]
)


@SETTINGS
@given(hands(), st.sampled_from([-1, CAISHEN]))
def test_shanten_matches_reference(c, joker):
    assert hand.shanten_standard(c, joker) == ref.shanten_standard(c, joker)
    assert hand.shanten(c, joker) == ref.shanten(c, joker)
    if c.sum() >= 13:
        assert hand.shanten_seven_pairs(c, joker) == ref.shanten_seven_pairs(c, joker)


@SETTINGS
@given(hands(sizes=(2, 5, 8, 11, 14)), st.sampled_from([-1, CAISHEN]))
def test_is_win_matches_reference(c, joker):
    assert hand.is_win(c, joker) == ref.is_win(c, joker)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands(sizes=(1, 4, 7, 10, 13)), st.sampled_from([-1, CAISHEN]))
def test_waits_and_baotou_match_reference(c, joker):
    assert hand.waits(c, joker) == ref.waits(c, joker)
    if joker >= 0:
        assert hand.is_baotou(c, joker) == ref.is_baotou(c, joker)
    base = ref.shanten(c, joker)
    expected = []
    for t in range(34):
        if c[t] < 4:
            d = c.copy()
            d[t] += 1
            if ref.shanten(d, joker) < base:
                expected.append(t)
    assert [t for t, _ in hand.effective_tiles(c, joker)] == expected


@SETTINGS
@given(hands(sizes=(2, 5, 8, 11, 14), joker=7), st.integers(0, 33))
def test_any_joker_kind(c, joker):
    """The kernels take any kind as the joker, not only 白."""
    c2 = c.copy()
    if joker != 7:  # move the jokers of kind 7 to the tested kind if it has room
        moved = min(int(c2[7]), 4 - int(c2[joker]))
        c2[7] -= moved
        c2[joker] += moved
    assert hand.shanten(c2, joker) == ref.shanten(c2, joker)
    assert hand.is_win(c2, joker) == ref.is_win(c2, joker)


def _reading_tiles(r: readings.Reading, joker: int) -> Counter:
    """Natural tiles of a reading, plus the jokers (counted at the joker kind)."""
    out = Counter()
    for g in r.groups:
        size = {"run": 3, "triplet": 3, "pair": 2}[g.type]
        if g.kind < 0:
            out[joker] += size
            continue
        members = [g.kind, g.kind + 1, g.kind + 2] if g.type == "run" else [g.kind] * size
        for t in g.joker_as:
            members.remove(t)
            out[joker] += 1
        for t in members:
            out[t] += 1
    return out


@SETTINGS
@given(hands(sizes=(2, 5, 8, 11, 14), max_jokers=2), st.sampled_from([-1, CAISHEN]))
def test_readings(c, joker):
    rs = readings.readings(c, joker)
    assert len(rs) == len(set(rs))
    expect = Counter({t: int(v) for t, v in enumerate(c) if v})
    std = [r for r in rs if r.form == "standard"]
    assert bool(std) == hand.is_win_standard(c, joker)
    assert any(r.form == "seven_pairs" for r in rs) == hand.is_seven_pairs(c, joker)
    m = (int(c.sum()) - 1) // 3
    for r in rs:
        assert +_reading_tiles(r, joker) == expect
        if r.form == "standard":
            assert r.groups[0].type == "pair" and len(r.groups) == m + 1
            assert all(g.type != "pair" for g in r.groups[1:])
        else:
            assert len(r.groups) == 7 and all(g.type == "pair" for g in r.groups)
    if joker < 0 or c[joker] == 0:
        got = {(("pair", r.groups[0].kind), *sorted((g.type, g.kind) for g in r.groups[1:])) for r in std}
        assert got == ref.standard_decompositions_no_joker([int(x) for x in c])


def test_readings_example():
    rs = readings.readings(parse("111222333m44m555p"))
    assert len(rs) == 3  # pair 44m + three triplets, 44m + three 123m runs, 11m + 123m 234m 234m
    rs = readings.readings(parse("123m456m789p2s234s5z"), CAISHEN)
    pairs = {r.groups[0] for r in rs}
    assert readings.Group("pair", 19, (19,)) in pairs  # 2s + 财神 as 2s
    assert readings.Group("pair", 19, ()) in pairs  # 22s, with 财神 completing 34s


# ------------------------------------------------------------ one call: the fast path and its inputs (issue 48)


def _input_forms(c: np.ndarray) -> dict:
    """The hand ``c`` in each form the fast path reads (a ``uint8`` / ``int64`` row of any layout, a list or
    tuple of ``int``) and in two it leaves to the slow path (an ``int32`` row, a list of numpy ints)."""
    strided = np.zeros(68, np.uint8)
    strided[::2] = c
    return {"uint8": c, "int64": c.astype(np.int64), "strided": strided[::2], "list": [int(x) for x in c],
            "tuple": tuple(int(x) for x in c), "int32": c.astype(np.int32), "numpy ints": [np.int64(x) for x in c]}


def _one_hand_calls(n: int) -> list:
    """The one-hand functions that take a hand of ``n`` tiles, as ``(name, call(counts, joker))``."""
    calls = [("shanten", hand.shanten), ("shanten_standard", hand.shanten_standard)]
    if n >= 13:
        calls.append(("shanten_seven_pairs", hand.shanten_seven_pairs))
    if n % 3 == 2:
        calls += [("is_win", hand.is_win), ("is_win_standard", hand.is_win_standard),
                  ("is_seven_pairs", hand.is_seven_pairs)]
    else:
        calls += [("is_baotou", hand.is_baotou), ("waits", hand.waits), ("effective_tiles", hand.effective_tiles)]
    return calls


@SETTINGS
@given(hands(), st.sampled_from([-1, CAISHEN]))
def test_every_input_form_gives_the_same_answer(c, joker):
    """The fast path's readers (marshal for a list or tuple, a copy for a row of any layout) and the slow
    path answer alike; the ``uint8`` answers are checked against the reference above."""
    for name, call in _one_hand_calls(int(c.sum())):
        want = call(c, joker)
        assert type(want) is type(call(c, np.int64(joker)))  # a numpy joker: the slow path
        for form, x in _input_forms(c).items():
            got = call(x, joker)
            assert got == want and type(got) is type(want), (name, form, got, want)
        assert call(c, np.int64(joker)) == want


def test_fast_path_is_taken_for_its_inputs(monkeypatch):
    """Every one-hand function answers a ``uint8`` / ``int64`` row, a list and a tuple of ``int`` with an
    ``int`` joker without the slow path's checks (so marshal's format is the one the kernel reads)."""
    def slow(*args):
        raise AssertionError("the slow path ran")

    monkeypatch.setattr(hand, "_check_hand", slow)
    for s in (H13, H14, "123m456m789p234s5z", "1m"):
        c = parse(s)
        for name, call in _one_hand_calls(int(c.sum())):
            for form, x in _input_forms(c).items():
                if form not in ("int32", "numpy ints"):
                    call(x, CAISHEN)
                    call(x, -1)
    with pytest.raises(AssertionError, match="slow path"):
        hand.shanten(parse(H13).astype(np.int32))


def _bad_counts():
    """(form, counts, message): hands the fast path refuses, with the slow path's words for them."""
    base = [int(x) for x in parse(H13)]
    out = []
    for form in ("list", "tuple", "uint8", "int64"):
        def make(i, v, form=form):
            x = list(base)
            x[i] = v
            if form == "list":
                return x
            if form == "tuple":
                return tuple(x)
            return np.array(x, dtype=np.uint8 if form == "uint8" else np.int64)

        out += [(form, make(7, 5), "counts[7] (8m) = 5 is outside 0..4"),
                (form, make(4, 4), "3m+1 or 3m+2 tiles (at most 14); got 17 tiles"),
                (form, make(0, 0)[:33], "shape (34,), got (33,)")]
        if form != "uint8":
            out += [(form, make(3, -1), "counts[3] (4m) = -1 is outside 0..4"),
                    (form, make(3, 256), "counts[3] (4m) = 256 is outside 0..4"),  # 0 as a byte
                    (form, make(3, 2**40), f"counts[3] (4m) = {2**40} is outside 0..4")]
        if form in ("list", "tuple"):
            out += [(form, make(5, True), "counts[5] must be an integer, got True"),
                    (form, make(33, False), "counts[33] must be an integer, got False"),
                    (form, make(2, 1.0), "counts must be integers, got dtype float64"),
                    (form, make(2, None), "counts[2] must be an integer, got None")]
    return out


@pytest.mark.parametrize("form, counts, message", _bad_counts(), ids=lambda x: x if isinstance(x, str) else "")
def test_fast_path_refusals_name_what_is_wrong(form, counts, message):
    for name, call in _one_hand_calls(13):
        with pytest.raises(ValueError, match=re.escape(message)):
            call(counts, -1)
    for bad in (34, -2, 2**70, True):
        with pytest.raises(ValueError, match=f"joker.*{re.escape(repr(bad))}"):
            hand.shanten([int(x) for x in parse(H13)], bad)
    with pytest.raises(ValueError, match="3m\\+2"):
        hand.is_win([int(x) for x in parse(H13)])
    with pytest.raises(ValueError, match="13 or 14 tile"):
        hand.shanten_seven_pairs([int(x) for x in parse("123m45p")])


# ------------------------------------------------------------ batch and distribution


@SETTINGS
@given(st.lists(hands(sizes=(13, 14)), min_size=1, max_size=8))
def test_batch_matches_scalar(rows):
    a = np.stack(rows)
    for joker in (-1, CAISHEN):
        assert list(hand.shanten_batch(a, joker)) == [hand.shanten(r, joker) for r in rows]
        assert list(hand.is_win_batch(a, joker)) == [hand.is_win(r, joker) if r.sum() == 14 else False for r in rows]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large])
@given(st.lists(hands(sizes=(1, 4, 7, 10, 13)), min_size=1, max_size=10), st.sampled_from([-1, CAISHEN]))
def test_effective_batch_matches_scalar(rows, joker):
    got = hand.effective_tiles_batch(np.stack(rows), joker)
    for r, row in enumerate(rows):
        assert list(np.flatnonzero(got[r])) == [t for t, _ in hand.effective_tiles(row, joker)]


@SETTINGS
@given(hands(sizes=(1, 2, 4, 5, 7, 8, 10, 11, 13, 14), fours=True), st.sampled_from([-1, CAISHEN]),
       st.sampled_from([1, 2, 35]))
def test_changes_compact_equals_shanten_each_change_and_near_loses_no_wait(c, joker, limit):
    """``_changes_compact`` gives ``_shanten_each_change``'s shanten for each kind it reaches (all of them
    with a limit of 35) and counts the complete ones up to ``limit``; ``_near`` of the held kinds (and the
    joker kind) loses no completing draw when no joker is held: every other kind that completes a hand
    holding none of it sits next to a held kind in its suit."""
    from caishen.sim.hand import _changes_compact, _near, _shanten_each_change
    from caishen.sim.tables import hand_tables

    tabs = hand_tables()
    delta = 1 if int(c.sum()) % 3 == 1 else -1
    ref_out = np.zeros(34, np.int64)
    _shanten_each_change(c, np.int64(joker), tabs, np.int64(delta), ref_out)
    changeable = sum(1 << t for t in range(34) if (c[t] < 4 if delta > 0 else c[t] > 0))
    complete = [t for t in range(34) if ref_out[t] == -1]
    held = sum(1 << t for t in range(34) if c[t] > 0)
    near = _near(np.int64(held)) | ((1 << joker) if joker >= 0 else 0)  # a drawn joker completes on its own
    if joker >= 0 and c[joker] > 0:
        near = (1 << 34) - 1  # a held joker joins any kind: near says nothing
    assert all((near >> t) & 1 for t in complete)
    for todo in (changeable, near & changeable):
        out = np.full(34, 77, np.int64)
        n = _changes_compact(c, np.int64(joker), tabs, np.int64(delta), np.int64(todo), np.int64(limit), out)
        assert n == min(len([t for t in complete if (todo >> t) & 1]), limit)
        reached = [t for t in range(34) if out[t] != 77]
        assert all((todo >> t) & 1 and out[t] == ref_out[t] for t in reached)
        if limit == 35:
            assert reached == [t for t in range(34) if (todo >> t) & 1]


def test_near_is_the_kinds_next_to_a_held_one_within_its_suit():
    """``_near`` by hand: 1m gives 1m-3m; 9p gives 7p-9p (not 1s); an honor only itself."""
    from caishen.sim.hand import _near

    def kinds(mask):
        return [t for t in range(34) if (mask >> t) & 1]

    assert kinds(_near(np.int64(1 << 0))) == [0, 1, 2]
    assert kinds(_near(np.int64(1 << 17))) == [15, 16, 17]
    assert kinds(_near(np.int64(1 << 18))) == [18, 19, 20]
    assert kinds(_near(np.int64(1 << 26))) == [24, 25, 26]
    assert kinds(_near(np.int64(1 << 27))) == [27]
    assert kinds(_near(np.int64((1 << 4) | (1 << 33)))) == [2, 3, 4, 5, 6, 33]


@SETTINGS
@given(hands(sizes=(1, 4, 7, 10, 13, 2, 5, 8, 11, 14)), st.sampled_from([-1, CAISHEN]))
def test_shanten_after_each_change(c, joker):
    """The incremental kernel equals a full evaluation of every changed hand."""
    n = int(c.sum())
    fn, delta = (hand.shanten_after_draws, 1) if n % 3 == 1 else (hand.shanten_after_discards, -1)
    got = fn(c, joker)
    for t in range(34):
        d = c.astype(int)
        d[t] += delta
        if d[t] < 0 or d[t] > 4:
            assert got[t] == 99
        else:
            assert got[t] == hand.shanten(d.astype(np.uint8), joker), t


# ------------------------------------------------------------ four copies of a kind (J-1.1, K-2.1)
#
# Without a joker a kind has four tiles (J-1.1): a kind held four times can be
# neither waited on nor used a fifth time.  With a joker kind a held or drawn
# joker may stand for a fifth copy (K-2.1), so there the fifth copy counts.


@pytest.mark.parametrize(
    "s, standard, best",
    [
        ("123456789m1111z", 1, 1),  # the 1z pair would be a fifth 1z: not ready (was 0, no waits)
        ("1111444478m", 2, 2),  # was 1
        ("1111z", 1, 1),  # one set + a pair from four 1z needs a fifth 1z: was 0
        ("11114444677778m", 1, 0),  # 14 tiles, standard form was 0 (mahjong package: 1); seven pairs 0
        ("1111m2222p3333s4z", 2, 0),  # ready on 4z only as seven pairs (a four = two pairs)
    ],
)
def test_J_1_1_no_joker_shanten_respects_four_copies(s, standard, best):
    """Without a joker no target uses a fifth copy (J-1.1: four tiles a kind)."""
    c = parse(s)
    assert hand.shanten_standard(c) == standard
    assert hand.shanten(c) == best
    assert hand.shanten(c) == ref.shanten(c)
    if c.sum() % 3 == 1:
        assert (best == 0) == bool(hand.waits(c))
        info = hand.describe(c)
        assert info["shanten"] == best and bool(info["waits"]) == (best == 0)


def test_J_1_1_no_joker_shanten_agrees_with_mahjong_package_on_fours():
    """An outside reference: the `mahjong` package's standard-form shanten (riichi, four
    copies a kind, no jokers) on 6,000 hands of 4..14 tiles holding one or two fours."""
    shanten_pkg = pytest.importorskip("mahjong.shanten").Shanten
    fours = hands_with_fours(6000, seed=9)
    assert (fours == 4).any(axis=1).all()
    theirs = [shanten_pkg.calculate_shanten_for_regular_hand(list(map(int, r))) for r in fours]
    assert [hand.shanten_standard(r) for r in fours] == theirs


@pytest.mark.parametrize(
    "s, expected, waits",
    [
        ("123456789m1111z", 0, ["5z"]),  # a drawn 财神 is the fifth 1z
        ("1111z", 0, ["5z"]),  # 111z + 1z and a drawn 财神 as the pair
        ("1111444478m", 1, []),
        ("1111m2222p3333s4z", 0, ["4z", "5z"]),
    ],
)
def test_K_2_1_joker_fifth_copy_drawn(s, expected, waits):
    """With the 财神 kind given the fifth copy counts: a drawn 财神 fills it (K-2.1)."""
    c = parse(s)
    assert hand.shanten(c, CAISHEN) == expected
    assert sorted(hand.waits(c, CAISHEN)) == sorted(tiles.parse_kinds("".join(waits)))


def test_K_2_1_joker_fifth_copy_held():
    """A held 财神 completes four 1z as triplet + pair (the fifth 1z); without a joker kind it cannot."""
    assert hand.is_win(parse("1111z5z"), CAISHEN)
    assert hand.shanten(parse("1111z5z"), CAISHEN) == -1
    assert not hand.is_win(parse("1111z5z"))
    assert hand.shanten(parse("1111z5z")) == 0  # 111z + 5z5z: one more 5z, not a fifth 1z
    # 爆头 (K-6.2): four 1z minus nothing are not sets; 111z + a 财神 is
    assert hand.is_baotou(parse("111z5z"), CAISHEN)


@SETTINGS
@given(hands(fours=True), st.sampled_from([-1, CAISHEN]))
def test_J_5_1_shanten_with_fours_matches_reference(c, joker):
    """Shanten (both forms) of hands holding fours equals the reference (4-copy cap without a joker)."""
    assert hand.shanten_standard(c, joker) == ref.shanten_standard(c, joker)
    assert hand.shanten(c, joker) == ref.shanten(c, joker)
    if c.sum() >= 13:
        assert hand.shanten_seven_pairs(c, joker) == ref.shanten_seven_pairs(c, joker)


@SETTINGS
@given(hands(sizes=(2, 5, 8, 11, 14), fours=True), st.sampled_from([-1, CAISHEN]))
def test_J_5_1_is_win_with_fours_matches_reference(c, joker):
    assert hand.is_win(c, joker) == ref.is_win(c, joker)
    assert hand.is_win_standard(c, joker) == (ref.shanten_standard(c, joker) == -1)


def _jiating_n_waits(c):
    """Jiating's readiness count (D3): kinds completing the 3m+1 hand of which fewer than 4 are held."""
    from caishen.sim.rules.jiating.turn import _n_waits
    from caishen.sim.tables import hand_tables

    own = c.astype(np.int64)
    return int(_n_waits(c, own, hand_tables(), np.empty(34, np.int64)))


def _jiating_is_hard_ready(c):
    """J-4.2's test of the engine: a kind completes the 3m+1 hand of which fewer than 4 are held."""
    from caishen.sim.rules.jiating.turn import _is_hard_ready
    from caishen.sim.tables import hand_tables

    return bool(_is_hard_ready(c, c.astype(np.int64), hand_tables(), np.empty(34, np.int64)))


@SETTINGS
@given(hands(sizes=(1, 4, 7, 10, 13), fours=True), st.sampled_from([-1, CAISHEN]))
def test_D3_waits_and_effective_tiles_with_fours_match_reference(c, joker):
    """Waits and effective tiles equal the reference; shanten 0 exactly when a wait exists,
    and without a joker exactly when Jiating's readiness count (D3, no melds) is positive and its
    J-4.2 test says ready."""
    w = hand.waits(c, joker)
    assert w == ref.waits(c, joker)
    assert (hand.shanten(c, joker) == 0) == bool(w)
    if joker < 0:
        assert _jiating_n_waits(c) == len(w)
        assert _jiating_is_hard_ready(c) == bool(w)
    base = ref.shanten(c, joker)
    expected = []
    for t in range(34):
        if c[t] < 4:
            d = c.copy()
            d[t] += 1
            if ref.shanten(d, joker) < base:
                expected.append(t)
    eff = hand.effective_tiles(c, joker)
    assert [t for t, _ in eff] == expected
    assert all(live == 4 - c[t] for t, live in eff)  # never a fifth copy
    # every shanten step is a real draw: some kind held fewer than four times lowers it by one
    assert expected and min(ref.shanten(c + np.eye(34, dtype=np.uint8)[t], joker) for t in expected) == base - 1


@SETTINGS
@given(hands(sizes=(1, 4, 7, 10, 13, 2, 5, 8, 11, 14), fours=True), st.sampled_from([-1, CAISHEN]))
def test_J_5_1_shanten_each_change_with_fours_matches_reference(c, joker):
    """_shanten_each_change (via shanten_after_draws / _discards) equals the reference on each changed hand."""
    n = int(c.sum())
    fn, delta = (hand.shanten_after_draws, 1) if n % 3 == 1 else (hand.shanten_after_discards, -1)
    got = fn(c, joker)
    for t in range(34):
        d = c.astype(int)
        d[t] += delta
        if d[t] < 0 or d[t] > 4:
            assert got[t] == 99
        else:
            assert got[t] == ref.shanten(d, joker), t


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large])
@given(st.lists(hands(sizes=(1, 4, 7, 10, 13), fours=True), min_size=1, max_size=6), st.sampled_from([-1, CAISHEN]))
def test_J_5_1_batch_with_fours_matches_reference(rows, joker):
    """shanten_batch, is_win_batch (3m+2 rows: each 3m+1 row plus one tile) and effective_tiles_batch."""
    a = np.stack(rows)
    assert list(hand.shanten_batch(a, joker)) == [ref.shanten(r, joker) for r in rows]
    eff = hand.effective_tiles_batch(a, joker)
    for r, row in enumerate(rows):
        base = ref.shanten(row, joker)
        want = [t for t in range(34) if row[t] < 4 and ref.shanten(row + np.eye(34, dtype=np.uint8)[t], joker) < base]
        assert list(np.flatnonzero(eff[r])) == want
    full = np.stack([r + np.eye(34, dtype=np.uint8)[int(np.argmin(r))] for r in rows])
    assert list(hand.is_win_batch(full, joker)) == [ref.is_win(r, joker) for r in full]


def test_mean_shanten_of_random_hands():
    """10**6 uniformly random 14-tile hands.

    The published mean 3.15594 (data README) is the *Japanese* shanten, the
    minimum of the standard form, seven pairs (Japanese) and thirteen
    orphans; the external files' own standard column averages 3.32, which is
    what our standard form gives.  We rebuild the published figure from our
    standard-form kernel plus the two Japanese special forms."""
    from caishen.sim.hand import _shanten_standard_batch
    from caishen.sim.tables import hand_tables

    counts = random_hands(10**6, 14, seed=2024)
    std = np.empty(len(counts), np.int8)
    _shanten_standard_batch(counts, -1, hand_tables(), std)
    pairs = (counts >= 2).sum(axis=1)
    kinds = (counts >= 1).sum(axis=1)
    seven_jp = 6 - pairs + np.maximum(0, 7 - kinds)
    orphans = np.zeros(34, bool)
    orphans[[0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33]] = True
    o = counts[:, orphans]
    kokushi = 13 - (o >= 1).sum(axis=1) - ((o >= 2).any(axis=1)).astype(int)
    japanese = np.minimum(np.minimum(std, seven_jp), kokushi)
    assert abs(japanese.mean() - 3.15594) < 0.0025  # ~3 standard errors at 10**6
    hist = np.bincount(japanese + 1, minlength=8) / len(counts)
    published = [0.00000278, 0.000696, 0.02334, 0.1950, 0.4393, 0.2852, 0.0550, 0.00155]
    assert np.allclose(hist, published, atol=0.002)
    # the standard form alone, as the external files' own column
    assert abs(std.mean() - 3.3222) < 0.02


def random_hands(n: int, size: int, seed: int) -> np.ndarray:
    """n uniformly random hands of ``size`` tiles from the 136-tile set."""
    rng = np.random.default_rng(seed)
    keys = rng.random((n, 136), dtype=np.float32)
    idx = np.argpartition(keys, size, axis=1)[:, :size] // 4
    counts = np.zeros((n, 34), np.uint8)
    np.add.at(counts, (np.repeat(np.arange(n), size), idx.ravel()), 1)
    return counts


def hands_with_fours(n: int, seed: int) -> np.ndarray:
    """n hands of 4..14 tiles (3m+1 / 3m+2) holding one or two kinds four times, every
    other one in one suit (as ``benchmarks/bench_hand.py``)."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, 34), np.uint8)
    sizes = rng.choice([4, 5, 7, 8, 10, 11, 13, 14], n)
    for r in range(n):
        span = 9 if r % 2 else 34
        for q in rng.choice(span, rng.integers(1, 3), replace=False):
            if counts[r].sum() + 4 <= sizes[r]:
                counts[r, q] = 4
        while counts[r].sum() < sizes[r]:
            t = rng.integers(0, span)
            if counts[r, t] < 4:
                counts[r, t] += 1
    return counts


@SETTINGS
@given(
    st.lists(hands(sizes=(1, 4, 7, 10, 13, 2, 5, 8, 11, 14)), min_size=1, max_size=6),
    st.integers(0, 5),
    st.sampled_from(["over4", "size0", "size15", "ok"]),
    st.sampled_from([-1, CAISHEN]),
)
def test_batch_apis_check_rows_inside_the_kernel(rows, where, fault, joker):
    """The public batch APIs check uint8 rows inside the numba call (issue 11 item 4): good rows
    give the raw kernel's answers; a bad row is a ValueError naming that row, like the numpy check."""
    a = np.stack(rows).astype(np.uint8)
    r = where % len(a)
    if fault == "over4":
        a[r, 0] = 5
    elif fault == "size0":
        a[r] = 0
    elif fault == "size15":
        a[r] = 0
        a[r, :4] = 4
        a[r, 4:7] = 1  # 19 tiles
    if fault == "ok":
        raw = np.empty(len(a), np.int8)
        hand._shanten_batch(a, joker, hand.hand_tables(), raw)
        assert list(hand.shanten_batch(a, joker)) == list(raw)
        assert list(hand.shanten_batch(a, joker)) == list(hand.shanten_batch(a.astype(np.int64), joker))
        return
    name = f"counts[{r}, 0]" if fault == "over4" else f"row {r} "
    for call in (hand.shanten_batch, hand.is_win_batch):
        with pytest.raises(ValueError) as e:
            call(a, joker)
        assert name in str(e.value)
        with pytest.raises(ValueError) as e2:  # the numpy path (int64 input) says the same
            call(a.astype(np.int64), joker)
        assert str(e2.value) == str(e.value)


def _scan_reference(c, joker):
    """hand._scan's values the obvious way: base-5 codes of the natural tiles per suit, tiles, jokers,
    and the natural kinds' pairs (c // 2) and singles (c % 2)."""
    nat = [0 if t == joker else int(c[t]) for t in range(34)]
    codes = [sum(nat[9 * s + i] * 5**i for i in range(9)) for s in range(3)]
    codes.append(sum(nat[27 + i] * 5**i for i in range(7)))
    k = int(c[joker]) if joker >= 0 else 0
    return (*codes, int(c.sum()), k, sum(x // 2 for x in nat), sum(x % 2 for x in nat))


@njit(cache=True)
def _scan_kernel(c, joker):
    return hand._scan(c, joker)


@SETTINGS
@given(hands(fours=True), st.integers(-1, 33))
def test_scan_reads_words_as_the_counts_say(c, joker):
    """The word-at-a-time scan (SWAR) equals the obvious per-kind sums, for a C-contiguous row, a row
    of a 2-D array and a strided view (read byte by byte)."""
    expected = _scan_reference(c, joker)
    assert _scan_kernel(c, joker) == expected
    two = np.stack([c, c[::-1]])
    assert _scan_kernel(two[0], joker) == expected
    wide = np.zeros(68, np.uint8)
    wide[::2] = c
    assert _scan_kernel(wide[::2], joker) == expected


def _row_fault_reference(row, need):
    """hand._row_fault the obvious way: 1 a count over 4, 2 a size not 3m+1 / 3m+2 (at most 14), 3 a size
    not ``need`` mod 3."""
    if any(int(v) > 4 for v in row):
        return 1
    n = int(row.sum())
    if n > 14 or n % 3 == 0:
        return 2
    if need >= 0 and n % 3 != need:
        return 3
    return 0


@njit(cache=True)
def _row_fault_kernel(rows, need, out):
    for r in range(rows.shape[0]):
        out[r] = hand._row_fault(rows[r], need)


@SETTINGS
@given(st.lists(st.lists(st.one_of(st.integers(0, 4), st.integers(0, 255)), min_size=34, max_size=34),
                min_size=1, max_size=8),
       st.lists(st.integers(0, 33), max_size=14), st.sampled_from([-1, 1, 2]))
def test_row_fault_reads_words_as_the_counts_say(rows, kinds, need):
    """The batch APIs' in-kernel row check, four word loads (SWAR), equals the per-kind check on rows of
    any byte values (a count of 5..255 anywhere, the ninth kind of a suit included) and on hands."""
    a = np.array(rows, np.uint8)
    a[0] = 0
    for t in kinds:  # one row a hand of up to 14 tiles, with counts over 4 where kinds repeat
        a[0, t] += 1
    out = np.empty(len(a), np.int64)
    _row_fault_kernel(a, need, out)
    assert list(out) == [_row_fault_reference(row, need) for row in a]
