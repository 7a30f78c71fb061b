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
    PLANES_V1,
    _encode_context,
    check_feature_set,
    context_tables,
    doc_table,
    observation_set,
)
from caishen.sim.engine import N_KINDS, N_SEATS, Game
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
