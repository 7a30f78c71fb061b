"""The versioned feature sets (caishen.sim.bots.features): one table, read by the encoders, the docstrings,
the checks of checkpoints and weights files; the context encoder equals the planes; nothing hidden leaks."""

from __future__ import annotations

import numpy as np
import pytest

import caishen.envs.gym_env
import caishen.envs.observation
import caishen.envs.pettingzoo_env
from caishen.envs.observation import FLAT_INDEX, encode, feature_set
from caishen.sim.bots.features import (
    FEATURE_SETS,
    HISTORY_V1,
    KINDS_V1,
    PLANES_V1,
    _encode_context,
    _encode_kinds,
    check_feature_set,
    context_tables,
    doc_table,
    observation_set,
)
from caishen.sim.engine import DF_CLAIMED, N_KINDS, N_SEATS, Game
from caishen.sim.tiles import MELD_KONG_CONCEALED
from caishen.sim.rules import base as rulesets
from test_envs import _hidden_twin, _wall_with_quads


def test_observation_docstring_tables_are_the_feature_set_tables():
    """The layout tables of caishen.envs.observation are the tables of planes v1 and history v1."""
    doc = caishen.envs.observation.__doc__
    assert doc_table(PLANES_V1) in doc
    assert doc_table(HISTORY_V1, FEATURE_SETS["planes"].rows) in doc
    assert f"feature set ``planes`` version {FEATURE_SETS['planes'].version}" in doc


@pytest.mark.parametrize("module", [caishen.envs.gym_env, caishen.envs.pettingzoo_env])
def test_env_docstrings_name_the_feature_set_and_do_not_copy_its_table(module):
    """gym_env / pettingzoo_env state the shape and the set's name and version, and leave the table to
    caishen.envs.observation (written once)."""
    doc = " ".join(module.__doc__.split())
    rows, kinds = FEATURE_SETS["planes"].shape
    assert f"uint8[{rows}, {kinds}]" in doc
    assert f"feature set ``planes`` version {FEATURE_SETS['planes'].version}" in doc
    assert "``own_concealed_kongs``" not in doc and "``chain_kong``" not in doc


@pytest.mark.parametrize("layout", ["planes", "flat"])
@pytest.mark.parametrize("history", [False, True])
def test_encoder_shapes_are_the_feature_set_shapes(layout, history):
    """encode() returns the shape of its feature set; the set's name says the layout."""
    g = Game("kaihua").reset(seed=3)
    fs = feature_set(layout, history)
    assert encode(g, 0, layout=layout, history=history).shape == fs.shape
    assert fs is observation_set(layout, history) and fs.name == layout + ("+history" if history else "")
    assert fs.version >= 1 and fs.header() == {"name": fs.name, "version": fs.version}


@pytest.mark.parametrize("recorded, expected, msg", [
    (None, "flat", "field 'feature_set' must be"),
    ({"name": "flat"}, "flat", "field 'feature_set' must be"),
    ({"name": "flat", "version": True}, "flat", "field 'feature_set' must be"),
    ({"name": "nope", "version": 1}, "flat", "names the feature set 'nope'"),
    ({"name": "planes", "version": 1}, "flat", "is the feature set 'planes', this reader needs 'flat'"),
    ({"name": "flat", "version": 2}, "flat", "'flat' version 2, this code has version 1"),
])
def test_check_feature_set_names_the_file_and_the_field(recorded, expected, msg):
    with pytest.raises(ValueError, match="^net.bin: ") as e:
        check_feature_set(recorded, FEATURE_SETS[expected], "net.bin")
    assert msg in str(e.value)
    assert check_feature_set({"name": expected, "version": 1}, FEATURE_SETS[expected], "x") is FEATURE_SETS[expected]


def _context_reference(flat: np.ndarray) -> np.ndarray:
    """The context from the flat vector: own hand (34 inputs) and every scalar row (49 inputs)."""
    scalars = [g for g in PLANES_V1 if g.scalar]
    idx = list(range(FLAT_INDEX["hand"], FLAT_INDEX["hand"] + N_KINDS))
    for g in scalars:
        idx += list(range(FLAT_INDEX[g.name], FLAT_INDEX[g.name] + g.rows))
    return flat[idx].astype(np.float64)


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_context_encoder_matches_flat_vector_and_hides_hidden_information(rules):
    """context v1 (the learned bot's input, numba) equals its definition read off the flat vector on every
    state of random hands, and is unchanged when only what the seat cannot see changes."""
    rng = np.random.default_rng(11)
    joker = rulesets.get(rules).facts["joker"]
    rows, cols, scale = context_tables()
    assert rows.shape == (FEATURE_SETS["context"].rows,)
    x = np.zeros((FEATURE_SETS["planes"].rows, N_KINDS), np.uint8)
    out = np.zeros(rows.shape[0])
    twin_out = np.zeros_like(out)
    twin = Game(rules).reset(seed=0)
    n = 0
    for hand in range(4):
        game = Game(rules).reset(wall=_wall_with_quads(rng, joker), dealer=hand % N_SEATS)
        while not game.done:
            for seat in range(N_SEATS):
                _encode_context(game.state, seat, joker, x, rows, cols, scale, out)
                np.testing.assert_allclose(out, _context_reference(encode(game, seat, layout="flat")), atol=1e-6)
                _hidden_twin(game, twin, seat, rng)
                _encode_context(twin.state, seat, joker, x, rows, cols, scale, twin_out)
                np.testing.assert_array_equal(twin_out, out, err_msg=f"seat {seat}'s context sees hidden information")
                n += 1
            game.step(int(rng.choice(game.legal_actions())))
    assert n > 300


def _kinds_reference(planes: np.ndarray) -> np.ndarray:
    """kinds v1 without its ``seen`` row (left 0) read off the planes of caishen.envs.observation."""
    fs, first = FEATURE_SETS["kinds"], FEATURE_SETS["planes"].first_row
    row = fs.first_row
    out = np.zeros(fs.shape)
    out[row["hand"]] = planes[first["hand"]] / 4
    out[row["own_concealed_kongs"]] = planes[first["own_concealed_kongs"]]
    for r in range(N_SEATS):
        out[row["discards"] + r] = planes[first["discards"] + r] / 4
        out[row["melds"] + r] = (planes[first["chows"] + r] + 3 * planes[first["pongs"] + r]
                                 + 4 * planes[first["kongs"] + r]) / 4
    out[row["pending"]] = planes[first["pending"]]
    out[row["joker"]] = planes[first["joker"]]
    out[row["honor"], 27:] = 1
    out[row["terminal"], [0, 8, 9, 17, 18, 26]] = 1
    return out


def _hidden_copies(game, seat: int) -> np.ndarray:
    """Copies of each kind ``seat`` cannot see: the wall, the other seats' concealed tiles and concealed kongs."""
    st = game.state
    hidden = np.bincount(st["wall"][int(st["table"]["head"]):int(st["table"]["tail"]) + 1], minlength=N_KINDS)
    for p in range(N_SEATS):
        if p != seat:
            hidden = hidden + st["hands"][p]
            for m in np.flatnonzero(st["meld_type"][p] == MELD_KONG_CONCEALED):
                hidden[st["meld_kind"][p, m]] += 4
    return hidden


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_kinds_encoder_matches_planes_counts_what_is_seen_and_hides_hidden_information(rules):
    """kinds v1 (the conv bot's input, numba) equals its definition read off the planes on every state of
    random hands; its ``seen`` row is 4 minus the copies hidden from the seat (the wall, the others'
    concealed tiles and kongs: a count apart from the encoder's); it is unchanged when only what the seat
    cannot see changes."""
    rng = np.random.default_rng(12)
    joker = rulesets.get(rules).facts["joker"]
    fs = FEATURE_SETS["kinds"]
    assert fs.shape == (sum(g.rows for g in KINDS_V1), N_KINDS) and fs.version == 1
    seen = fs.first_row["seen"]
    x = np.zeros((FEATURE_SETS["planes"].rows, N_KINDS), np.uint8)
    out, twin_out = np.zeros(fs.shape), np.zeros(fs.shape)
    twin = Game(rules).reset(seed=0)
    n = claimed = 0
    for hand in range(4):
        game = Game(rules).reset(wall=_wall_with_quads(rng, joker), dealer=hand % N_SEATS)
        while not game.done:
            for seat in range(N_SEATS):
                _encode_kinds(game.state, seat, joker, x, out)
                ref = _kinds_reference(encode(game, seat, layout="planes"))
                mask = np.ones(fs.rows, bool)
                mask[seen] = False
                np.testing.assert_array_equal(out[mask], ref[mask])
                np.testing.assert_array_equal(out[seen] * 4, 4 - _hidden_copies(game, seat))
                _hidden_twin(game, twin, seat, rng)
                _encode_kinds(twin.state, seat, joker, x, twin_out)
                np.testing.assert_array_equal(twin_out, out, err_msg=f"seat {seat}'s kinds see hidden information")
                n += 1
            claimed += int((game.state["dflags"] & DF_CLAIMED).any())
            game.step(int(rng.choice(game.legal_actions())))
    assert n > 300 and claimed > 10
