"""Fuzzed input wherever input enters (issue 15 item 5), with hypothesis.

``caishen score`` (the scoring-vector cases and ``--rules-option``),
``caishen hand``, :meth:`caishen.sim.engine.Game.step`, the environments' ``step``
(``caishen.envs.gym_env``, ``caishen.envs.pettingzoo_env``, ``caishen.envs.batched``) and rule
options get random and adversarial values: huge integers, NaN and
infinities, bools where integers belong, wrong types, unicode, bytes,
numpy scalars and arrays.  Each either works (and then only with a value
that means what it says) or fails with a ``ValueError`` (CLI: exit status 2)
whose message names the value -- never a traceback, a numba typing error,
an integer overflow or a silent wrong answer -- and a rejected action leaves
the state as it was.

The bugs this fuzzing found are kept as named regression tests at the end.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import shared_data
from caishen import cli
from caishen.sim.rules import vectors
from caishen.sim.engine import N_ACTIONS, Game, load_rules
from caishen.sim.rules import base as rulesets
from caishen.sim.rules.options import MAX_MESSAGE

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: an exception type's name at the start of a message: a crash that slipped through as text
TYPED = re.compile(r"^[A-Z]\w*(Error|Exception|Warning)\b")

# ---------------------------------------------------------------------------
# adversarial values
# ---------------------------------------------------------------------------
json_values = st.one_of(
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**31, 2**63, -(2**63) - 1, 10**30, -1, 0, 3]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.text(alphabet=st.characters(min_codepoint=0x3000, max_codepoint=0x9FFF), max_size=6),
    st.sampled_from(["", " ", "1m" * 300, "\x00", "５m", "1m\u200b", "NaN", "true", "none", "discard 1m"]),
    st.none(),
    st.lists(st.integers(-3, 40), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
python_values = st.one_of(
    json_values,
    st.binary(max_size=4),
    st.sampled_from([np.bool_(True), np.int64(-1), np.int8(3), np.uint64(2**64 - 1), np.float32(1.0),
                     np.float64("nan"), np.array(3), np.array([1, 2]), complex(1, 1), 10**400, object(),
                     1.0, 2.5, b"1"]),
)


def same_state(a, b) -> bool:
    """Two engine state records (one game, or a batch) hold the same values, field by field
    (``tobytes`` would also compare the padding between fields)."""
    return all(np.array_equal(a[f], b[f]) for f in a.dtype.names)


def is_int(v) -> bool:
    """An integer value as :func:`caishen.sim.validate.check_int` accepts it: an int, a numpy integer or a
    0-d integer array (a bool is not one)."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# ---------------------------------------------------------------------------
# caishen score
# ---------------------------------------------------------------------------
#: two scoring-vector cases written out here (the first Kaihua and Jiating ones of shared/vectors),
#: so that the fuzzing never skips
BASE_CASES = [
    {"id": "fuzz-kaihua", "rules": "kaihua", "dealer": 0, "winner": 1, "win_type": "self_draw", "discarder": None,
     "concealed": "123m456m789p234s5s", "melds": [], "win_tile": "5s", "replacement_draw": False, "chain": [],
     "piao_circle": []},
    {"id": "fuzz-jiating", "rules": "jiating", "dealer": 0, "streak": 0, "winner": 1, "win_type": "discard",
     "discarder": 2, "concealed": "123m456p789s2p", "melds": [{"type": "pong", "tiles": "777z"}], "win_tile": "2p",
     "replacement_draw": False, "declaration": "none", "first_turn": False, "visible": ""},
]


def vector_cases():
    """:data:`BASE_CASES` and the first cases of each vector file of ``shared/vectors`` where it is found
    (``$CAISHEN_SHARED``, else beside the repository, :mod:`shared_data`)."""
    out = list(BASE_CASES)
    if shared_data.path("vectors", "kaihua.jsonl").exists():
        for name in ("kaihua", "jiating"):
            with open(shared_data.path("vectors", f"{name}.jsonl"), encoding="utf-8") as f:
                out += [json.loads(x) for x in f if x.strip()][:6]
    return out


CASES = vector_cases()
#: keys whose value must be an integer seat / count: anything else is an error, never a guess
INT_KEYS = {"dealer", "winner", "streak"}
#: keys with a closed set of string values
ENUM_KEYS = {"rules": {"kaihua", "jiating"}, "win_type": {"self_draw", "discard", "robbed_kong"},
             "declaration": {"none", "jiating", "hard", "架听", "硬子"}}


def _score_one(case: dict) -> dict:
    line = json.dumps(case, ensure_ascii=False)  # NaN and Infinity become JSON's NaN / Infinity tokens
    out = list(vectors.score_lines([line]))
    assert len(out) == 1
    return out[0]


#: the longest message the house cuts to (caishen.sim.rules.options.short_text: MAX_MESSAGE and a note of the cut)
LONGEST = MAX_MESSAGE + 40


def assert_clean_error(message: str) -> None:
    assert isinstance(message, str) and message
    assert len(message) <= LONGEST, len(message)
    assert not TYPED.match(message), f"a crash passed as a message: {message}"
    assert "Traceback" not in message and "numba" not in message.lower(), message


@FUZZ
@given(st.data(), json_values)
def test_fuzz_score_case_values(data, value):
    case = dict(data.draw(st.sampled_from(CASES)))
    key = data.draw(st.sampled_from(sorted(k for k in case if k not in ("id", "expect"))))
    case[key] = value
    out = _score_one(case)
    if "error" in out:
        assert out["line"] == 1
        assert_clean_error(out["error"])
        return
    # accepted: the value must have been one that means what it says
    if key in INT_KEYS:
        assert is_int(value), f"{key}={value!r} was accepted"
    if key in ENUM_KEYS:
        assert isinstance(value, str) and value in ENUM_KEYS[key], f"{key}={value!r} was accepted"
    if key in ("concealed", "win_tile"):
        assert isinstance(value, str), f"{key}={value!r} was accepted"
    assert isinstance(out.get("win"), bool)


@FUZZ
@given(st.data(), json_values)
def test_fuzz_score_whole_lines_of_junk(data, value):
    """Any JSON value (not an object), or an object of junk keys, on a line: an error on that line."""
    line = json.dumps(value) if not isinstance(value, dict) else json.dumps({"rules": "kaihua", **value})
    out = list(vectors.score_lines([line, json.dumps(CASES[0])]))
    assert "error" in out[0] and "error" not in out[1]  # the next line is still scored
    assert_clean_error(out[0]["error"])


def _option_fields():
    import dataclasses

    return sorted({(name, f.name) for name in rulesets.names() for f in dataclasses.fields(rulesets.get(name).options)})


@FUZZ
@given(st.sampled_from(_option_fields()), python_values)
def test_fuzz_rule_options(field, value):
    """load_rules / the scorer's --rules-option: a ValueError naming the option, or a value that
    means what it says (numbers: finite and integral for integer options; no NaN, no list)."""
    rules, name = field
    try:
        _, r = load_rules(rules, {name: value})
    except ValueError as e:
        assert_clean_error(str(e))
        assert name in str(e), str(e)
        return
    got = getattr(r, name)
    hint = {f.name: f.type for f in __import__("dataclasses").fields(rulesets.get(rules).options)}[name]
    if "int" in str(hint) and "tuple" not in str(hint) and got is not None:
        assert isinstance(got, int) and not isinstance(got, bool)
        assume(not isinstance(value, bytes))  # bytes: refused (test_regression_an_integer_rule_option_refuses_bytes)
        if isinstance(value, float):
            assert math.isfinite(value) and value == got
    if str(hint) == "bool":
        assert isinstance(got, bool)
        assert not isinstance(value, float), f"{name}={value!r} was accepted as {got!r}"


@FUZZ
@given(st.sampled_from(_option_fields()), st.text(max_size=20))
def test_fuzz_score_cli_rules_option_strings(field, text):
    """``caishen score --rules-option KEY=TEXT``: exit 2 with a message, or the case is scored."""
    _, name = field
    stdin = io.StringIO(json.dumps(CASES[0]) + "\n")
    code, out, err = _run_cli(["score", "--rules-option", f"{name}={text}"], stdin)
    assert code in (0, 1, 2), (code, err)
    if code == 2:
        assert err.startswith("caishen score: error: ") and "Traceback" not in err
        assert_clean_error(err.split("error: ", 1)[1].strip())


# ---------------------------------------------------------------------------
# caishen hand
# ---------------------------------------------------------------------------
def _run_cli(argv, stdin=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = __import__("sys").stdin
    try:
        if stdin is not None:
            __import__("sys").stdin = stdin
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as e:
                code = e.code
    finally:
        __import__("sys").stdin = old
    return code, out.getvalue(), err.getvalue()


tile_text = st.one_of(
    st.text(alphabet="0123456789mpsz", min_size=0, max_size=20),
    st.text(max_size=16),
    st.sampled_from(["123m456p789s1122z", "1m" * 200, "0m", "10m", "９m", "5z" * 5, "1111m", "123m456p789s11z5z",
                     "-1m", "1m\x00", "11112222333344m", "z", "1234567890m"]),
)


@FUZZ
@given(tile_text, st.one_of(st.none(), tile_text), st.one_of(st.none(), tile_text),
       st.sampled_from([None, "kaihua", "jiating"]), st.booleans())
def test_fuzz_hand_cli(tiles, joker, visible, rules, as_json):
    argv = ["hand", "--", tiles] if tiles.startswith("-") else ["hand", tiles]
    for flag, v in (("--joker", joker), ("--visible", visible)):
        if v is not None:
            argv[1:1] = [f"{flag}={v}"]
    if rules:
        argv[1:1] = ["--rules", rules]
    if as_json:
        argv[1:1] = ["--json"]
    code, out, err = _run_cli(argv)
    assert code in (0, 2), (code, err)
    if code == 2:
        assert err.startswith("caishen hand: error: ") or err.startswith("usage: "), err
        assert "Traceback" not in err
        if err.startswith("caishen hand: error: "):
            assert_clean_error(err.split("error: ", 1)[1].strip())
    elif as_json:
        info = json.loads(out)
        assert info["shanten"] >= -1


# ---------------------------------------------------------------------------
# Game.step and the environments' step: rejected actions change nothing
# ---------------------------------------------------------------------------
def _played(rules: str, seed: int, steps: int) -> Game:
    g = Game(rules).reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.done:
            break
        g.step(int(rng.choice(g.legal_actions())))
    return g


action_values = st.one_of(python_values, st.integers(0, N_ACTIONS - 1), st.sampled_from(
    ["discard 1m", "discard 5z", "pong", "pass", "win", "kong_added 1m", "Discard 1m", "discard", "discard 1m 2m"]))


@FUZZ
@given(st.sampled_from(["kaihua", "jiating"]), st.integers(0, 200), st.integers(0, 40), action_values)
def test_fuzz_game_step(rules, seed, steps, action):
    g = _played(rules, seed, steps)
    legal = set(g.legal_actions()) if not g.done else set()
    before, n_events = g.state.copy(), len(g.events)
    try:
        g.step(action)
    except ValueError as e:
        assert_clean_error(str(e))
        assert same_state(g.state, before), "a rejected action changed the state"
        assert len(g.events) == n_events
        return
    # accepted: a legal action index (or its name), never a coerced float / bool / array
    a = g.events[n_events]["action"]
    assert a in legal
    assert is_int(action) and int(action) == a or isinstance(action, str)


@FUZZ
@given(st.integers(0, 100), st.sampled_from([None, -500.0]), action_values)
def test_fuzz_gym_env_step(seed, illegal_reward, action):
    from caishen.envs.gym_env import MahjongEnv

    env = MahjongEnv(illegal_reward=illegal_reward)
    env.reset(seed=seed)
    before = env.game.state.copy()
    mask = env.action_masks()
    try:
        _, reward, terminated, _, info = env.step(action)
    except ValueError as e:
        assert_clean_error(str(e))
        assert same_state(env.game.state, before)
        return
    a = int(np.asarray(action)) if not isinstance(action, str) else None
    assert a is not None and np.asarray(action).shape == () and a == np.asarray(action)
    assert mask[a] or (illegal_reward is not None and terminated and info.get("illegal_action"))


@FUZZ
@given(st.integers(0, 100), st.sampled_from([None, -500.0]), action_values)
def test_fuzz_pettingzoo_env_step(seed, illegal_reward, action):
    from caishen.envs import pettingzoo_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = pettingzoo_env.env(illegal_reward=illegal_reward)
        env.reset(seed=seed)
        game = env.unwrapped.game
        mask = env.observe(env.agent_selection)["action_mask"]
        before = game.state.copy()
        try:
            env.step(action)
        except ValueError as e:
            assert_clean_error(str(e))
            assert same_state(game.state, before)
            return
    assert is_int(action) and 0 <= int(action) < N_ACTIONS
    assert mask[int(action)] or illegal_reward is not None
    assert not same_state(game.state, before) or env.terminations[env.agent_selection] or env.agents == []


@FUZZ
@given(st.integers(0, 100), st.sampled_from(["raise", "penalty"]), st.one_of(
    python_values,
    st.lists(st.one_of(st.integers(-5, 150), st.integers(-(2**70), 2**70)), min_size=2, max_size=2),
    st.sampled_from([np.array([2**64 - 1, 0], np.uint64), np.array([True, False]), np.array([1.0, 2.0]),
                     np.array([[1, 2]]), np.array([1, 2, 3]), np.array(["a", "b"]), np.array([None, None])]),
))
def test_fuzz_batched_env_step(seed, illegal, actions):
    from caishen.envs.batched import BatchedGames

    g = BatchedGames(2, illegal_action=illegal, reward="sign" if illegal == "penalty" else "points").reset(seed)
    before = g.states.copy()
    try:
        arr = np.asarray(actions)
    except (ValueError, OverflowError):  # numpy itself refuses to build the array (e.g. 2**70 in a list)
        arr = None
    try:
        g.step(actions)
    except ValueError as e:
        assert_clean_error(str(e))
        assert same_state(g.states, before)
        return
    assert arr is not None and arr.dtype.kind in "iu" and arr.shape == (2,)
    assert ((arr >= 0) & (arr < N_ACTIONS)).all()


# ---------------------------------------------------------------------------
# regressions found by this fuzzing (and kept by name)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("action", [145, -1, 10**30, np.uint64(2**64 - 1), 1.0, "discard 1m", [3], None])
def test_regression_pettingzoo_step_names_a_bad_action_instead_of_an_assertion(action):
    """Before: PettingZoo's bounds wrapper raised ``AssertionError: action is not in action space``."""
    from caishen.envs import pettingzoo_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = pettingzoo_env.env(illegal_reward=None)
        env.reset(seed=1)
        if action is None:  # None is the action of an agent whose hand is over; the agent to act is alive
            with pytest.raises((ValueError, AssertionError)):
                env.step(action)
            return
        named = re.escape(repr(action)[:8]) if not isinstance(action, int) else str(action)
        with pytest.raises(ValueError, match=named):
            env.step(action)


def test_regression_batched_step_names_a_huge_uint64_action_not_its_wrapped_value():
    """Before: ``2**64 - 1`` was converted to int64 first and named as action -1."""
    from caishen.envs.batched import BatchedGames

    g = BatchedGames(2).reset(0)
    with pytest.raises(ValueError, match=r"game 0: action 18446744073709551615 is outside 0\.\.144"):
        g.step(np.array([2**64 - 1, 0], np.uint64))


@pytest.mark.parametrize("huge", [10**1000, 10**5000], ids=["10**1000", "10**5000"])
def test_regression_game_step_cuts_the_echo_of_a_huge_action(huge):
    """Before: the engine's integer check echoed the whole integer (over 1000 characters for 10**1000;
    past 4300 digits int -> str failed, naming no value).  The validator shows its first digits."""
    g = Game("kaihua").reset(seed=0)
    with pytest.raises(ValueError) as e:
        g.step(huge)
    assert len(str(e.value)) <= LONGEST and "got 10000000000000000000... (" in str(e.value)


def test_regression_game_step_cuts_the_echo_of_a_long_action_name():
    """Before: parse_action echoed the whole action name (622 characters for a 600-character name)."""
    g = Game("kaihua").reset(seed=0)
    with pytest.raises(ValueError, match="unknown action name") as e:
        g.step("1m" * 300)
    assert len(str(e.value)) <= LONGEST


def test_regression_an_integer_rule_option_refuses_bytes():
    """Before: int(b'7') == 7 let bytes through as an integer option; the one validator
    (caishen.sim.validate) refuses them by name."""
    with pytest.raises(ValueError, match="max_exponent"):
        load_rules("kaihua", {"max_exponent": b"7"})


def test_regression_gym_step_cuts_the_echo_of_a_huge_action():
    """Before: the gym env echoed the whole integer (426 characters for 10**400)."""
    from caishen.envs.gym_env import MahjongEnv

    env = MahjongEnv(illegal_reward=None)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an integer in 0\.\.144, got 10000000000000000000\.\.\. \(401 digits\)") as e:
        env.step(10**400)
    assert len(str(e.value)) <= LONGEST
