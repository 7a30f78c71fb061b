"""The bots' cost and the arena's overhead, per core (CPU time of this process).

1. Self-play hands/s per policy (``caishen.sim.selfplay.batch.play_batch``, one numba call):
   greedy, greedy_safe, the tuned bot, a learned bot (``learned:PATH``, the default network
   ``hidden=(32, 16)`` built from the tuned weights: its forward pass costs what a trained one's
   does); then µs per decision of each on the same states of greedy play (the bot dispatch
   ``_bot_action`` in a numba loop).
2. ``caishen match`` against ``caishen simulate`` on the same policies and
   the same number of hands, both in-process through ``caishen.sim.selfplay.runner`` (one
   worker, Parquet written): the arena's hands/s as a fraction of
   simulate's (issue 13: >= 80% for numba policies).
3. The search bot ``mc:N``: microseconds per rollout (copy the determinized
   root, play the candidate, roll out to the end of the hand, score it) and
   rollouts per second per core, measured on states of greedy play; then
   milliseconds per searched decision and per hand of one ``mc:N`` seat.

CPU time (``time.process_time``) is used, so other load on a shared machine
disturbs the figures less than wall time would.

    python benchmarks/bench_bots.py [--rules kaihua] [--hands 4000] [--mc 8]   # a few minutes
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def selfplay_rate(rules: str, policies: str, hands: int, seed: int = 1) -> float:
    from caishen.sim.selfplay.batch import play_batch

    play_batch(4, seed, rules=rules, policies=policies)  # compile / load the cache
    t = time.process_time()
    play_batch(hands, seed, rules=rules, policies=policies)
    return hands / (time.process_time() - t)


def arena_vs_simulate(rules: str, policies: str, hands: int, seed: int = 1) -> tuple[float, float]:
    """``(arena hands/s, simulate hands/s)``: the same policies and hands through the runner, one worker."""
    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import runner

    specs = policies.split(",")
    n_s = len(arena.seatings(len(specs)))
    walls = hands // n_s
    filled = ",".join(specs[i] for i in arena.fill_seats(len(specs)))
    with tempfile.TemporaryDirectory() as d:
        arena.play_match(rules, specs, 4, seed, f"{d}/warm", workers=1, progress=False, schedule="rotate")
        sim_cfg = runner.make_config(rules, walls * n_s, seed, policies=filled, chunk_size=walls * n_s // 4)
        runner.run(sim_cfg, f"{d}/warm_sim", workers=1, progress=False)
        t = time.process_time()
        runner.run(sim_cfg, f"{d}/sim", workers=1, progress=False)
        t_sim = time.process_time() - t
        t = time.process_time()
        arena.play_match(rules, specs, walls, seed, f"{d}/arena", chunk_walls=walls // 4, workers=1, progress=False,
                         schedule="rotate")  # the seatings of arena.seatings(n) above
        t_arena = time.process_time() - t
    return walls * n_s / t_arena, walls * n_s / t_sim


def learned_file(rules: str, directory: str) -> str:
    """A learned weights file of the default size (tuned weights, zero residual) in ``directory``."""
    from caishen.sim.bots import learned
    from caishen.sim.bots.registry import load_tuned

    return learned.save_learned(f"{directory}/bench.npz", learned.from_tuned(load_tuned(rules)[0], rules=rules))


def decision_cost(rules: str, specs: list[str], n_states: int = 4000, seed: int = 5) -> dict[str, float]:
    """µs per decision of each bot spec on the same ``n_states`` decision states of greedy play
    (own turns and claims), the numba dispatch ``_bot_action`` called in one numba loop."""
    from numba import njit

    from caishen.sim import engine as E
    from caishen.sim.borrow import borrowed
    from caishen.sim.bots.policies import POLICY_GREEDY, _choose_action, new_work
    from caishen.sim.bots.registry import _bot_action, bot_table, make_context
    from caishen.sim.tables import hand_tables

    @njit(cache=False)
    def loop(code, param, states, ep, rp, tabs, work, bx):
        states, ep, rp, tabs, work, bx = borrowed((states, ep, rp, tabs, work, bx))  # as the batch loops
        acc = 0
        for i in range(states.shape[0]):
            st = states[i]
            acc += _bot_action(code, param, st, ep, rp, tabs, st.mask, work, bx)
        return acc

    name, r = E.load_rules(rules, None)
    ep, rp, tabs = E.engine_params(name, r), r.params(), hand_tables()
    work = new_work()
    rng = np.random.default_rng(seed)
    states = E.new_state(n_states)
    st = E.new_state()[0]
    n, hs = 0, seed
    while n < n_states:
        E._seeded_wall(hs, st)
        hs += 1
        E._reset(st, ep, rp, tabs, int(rng.integers(4)))
        while st["table"]["phase"] != E.PH_DONE and n < n_states:
            E._legal_mask(st, ep)
            if rng.random() < 0.3:
                states[n] = st
                n += 1
            E._step(st, ep, rp, tabs, _choose_action(POLICY_GREEDY, 0, st, ep, rp, tabs, st["mask"], work))
    out = {}
    for spec in specs:
        table, w = bot_table([spec] * 4, name, int(ep.joker))
        bx = make_context(name, r, w, seed, search=True)
        code, param = int(table[0, 0]), int(table[0, 1])
        loop(code, param, states[:2].copy(), ep, rp, tabs, work, bx)  # compile
        best = float("inf")
        for _ in range(3):
            batch = states.copy()  # the bots leave states unchanged, but time fresh copies anyway
            t = time.process_time()
            loop(code, param, batch, ep, rp, tabs, work, bx)
            best = min(best, time.process_time() - t)
        out[spec] = best / n_states * 1e6
    return out


def rollout_cost(rules: str, n_states: int, n_det: int, seed: int = 5) -> dict:
    """µs per rollout and ms per decision of the search bot on states of greedy play."""
    from caishen.sim import engine as E
    from caishen.sim.bots.registry import bot_table, make_context
    from caishen.sim.bots.policies import POLICY_GREEDY, _choose_action, new_work
    from caishen.sim.engine import _copy_state
    from caishen.sim.bots.search import _determinize, _hand_value, _mc_action, _rollout
    from caishen.sim.tables import hand_tables

    name, r = E.load_rules(rules, None)
    ep, rp, tabs = E.engine_params(name, r), r.params(), hand_tables()
    _, w = bot_table([f"mc:{n_det}"] * 4, name, int(ep.joker))
    bx = make_context(name, r, w, seed, search=True)
    work = new_work()
    rng = np.random.default_rng(seed)
    states = E.new_state(n_states)
    st = E.new_state()[0]
    n, hs = 0, seed
    while n < n_states:
        E._seeded_wall(hs, st)
        hs += 1
        E._reset(st, ep, rp, tabs, int(rng.integers(4)))
        while st["table"]["phase"] != E.PH_DONE and n < n_states:
            E._legal_mask(st, ep)
            if st["table"]["phase"] == E.PH_TURN and rng.random() < 0.1:
                states[n] = st
                n += 1
            E._step(st, ep, rp, tabs, _choose_action(POLICY_GREEDY, 0, st, ep, rp, tabs, st["mask"], work))
    sims, fb, ib, brng, jt, bf = bx.search
    root, sim = sims[0], sims[1]
    pol = np.full(4, POLICY_GREEDY, np.int64)  # every opponent played as greedy
    # warm up the kernels (compile or load them) on a first state
    s0 = states[0]
    me = int(s0["table"]["to_act"])
    _determinize(root, s0, me, ep, rp, tabs, brng, ib, pol)
    _copy_state(sim, root)
    E._step(sim, ep, rp, tabs, _choose_action(POLICY_GREEDY, 0, s0, ep, rp, tabs, s0["mask"], work))
    _rollout(sim, me, w[0], ep, rp, tabs, work, pol)
    _hand_value(sim, me, ep, jt, bf)
    _mc_action(2, w[0], s0, ep, rp, tabs, s0["mask"], work, bx.search)
    # rollouts: root -> copy -> first action (greedy's) -> rollout -> value
    t = time.process_time()
    n_roll = 0
    for i in range(n_states):
        s = states[i]
        me = int(s["table"]["to_act"])
        a = _choose_action(POLICY_GREEDY, 0, s, ep, rp, tabs, s["mask"], work)
        for _ in range(4):
            _determinize(root, s, me, ep, rp, tabs, brng, ib, pol)
            _copy_state(sim, root)
            E._step(sim, ep, rp, tabs, a)
            _rollout(sim, me, w[0], ep, rp, tabs, work, pol)
            _hand_value(sim, me, ep, jt, bf)
            n_roll += 1
    per_rollout = (time.process_time() - t) / n_roll
    # decisions
    t = time.process_time()
    for i in range(n_states):
        s = states[i]
        _mc_action(n_det, w[0], s, ep, rp, tabs, s["mask"], work, bx.search)
    per_decision = (time.process_time() - t) / n_states
    return {"us_per_rollout": per_rollout * 1e6, "rollouts_per_s": 1.0 / per_rollout,
            "ms_per_decision": per_decision * 1e3}


def mc_hand_cost(rules: str, n_det: int, hands: int, seed: int = 1) -> float:
    """Seconds per hand of one mc:N seat among greedy seats (CPU)."""
    from caishen.sim.selfplay.batch import play_batch

    pol = f"mc:{n_det},greedy,greedy,greedy"
    play_batch(1, seed, rules=rules, policies=pol)
    t = time.process_time()
    play_batch(hands, seed, rules=rules, policies=pol)
    t_mc = time.process_time() - t
    t = time.process_time()
    play_batch(hands, seed, rules=rules, policies="greedy")
    return (t_mc - (time.process_time() - t)) / hands


def opponent_llr(hands: int = 300) -> np.ndarray:
    """Re-measure the search bot's opponent model table (``search.OPP_LLR``): hands of seeds
    ``0 .. hands-1`` of both rule sets, seats greedy, random, tuned, greedy; per discard index row
    (``OPP_ROW`` discards each, the first 16 discards) and category, the log ratio of the random seat's
    frequencies over the greedy seats' (add-one counts, the 财神 left out).  The step API's random agent
    draws from its own unseeded stream, so a rerun differs from the shipped table by sampling noise
    (measured: within 0.16 on every cell)."""
    from caishen.agents import make_agent
    from caishen.sim import engine as E
    from caishen.sim.bots.search import OPP_LLR, OPP_ROW, _discard_category

    rows = OPP_LLR.shape[0]
    cnt = {"greedy": np.ones((rows, 3)), "random": np.ones((rows, 3))}
    for rules in ("kaihua", "jiating"):
        specs = ["greedy", "random", f"tuned:{rules}", "greedy"]
        bots = [make_agent(s) for s in specs]
        for seed in range(hands):
            game = E.Game(rules).reset(seed=seed)
            while not game.done:
                game.step(bots[game.current_player].act(game.observe()))
            st, joker = game.state, int(game._ep.joker)
            for p in (0, 1, 3):
                n = min(int(st["seat"][p]["n_discards"]), rows * OPP_ROW)
                for i, k in enumerate(st["discards"][p, :n]):
                    if int(k) != joker:
                        cnt[specs[p]][i // OPP_ROW, _discard_category(int(k))] += 1
    freq = {k: v / v.sum(axis=1, keepdims=True) for k, v in cnt.items()}
    return np.log(freq["random"] / freq["greedy"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="kaihua", choices=("kaihua", "jiating"))
    ap.add_argument("--hands", type=int, default=4000, help="hands per self-play / runner measurement")
    ap.add_argument("--mc", type=int, default=8, help="N of the mc:N figures")
    ap.add_argument("--mc-states", type=int, default=60, help="states of greedy play for the rollout figures")
    ap.add_argument("--mc-hands", type=int, default=20, help="hands with one mc:N seat for the per-hand cost")
    ap.add_argument("--opp-llr", type=int, default=0, metavar="HANDS",
                    help="only re-measure the search bot's opponent table on HANDS hands per rule set (300: the "
                         "shipped one) and print it beside search.OPP_LLR")
    args = ap.parse_args()
    if args.opp_llr > 0:
        from caishen.sim.bots.search import OPP_LLR

        print("measured:\n", np.round(opponent_llr(args.opp_llr), 3), "\nsearch.OPP_LLR:\n", OPP_LLR)
        return
    for k in ("hands", "mc", "mc_states", "mc_hands"):
        if getattr(args, k) < 1:
            ap.error(f"--{k.replace('_', '-')} must be >= 1")
    rules = args.rules
    print(f"{rules}, one core (CPU time)")
    tmp = tempfile.mkdtemp()
    net = learned_file(rules, tmp)
    print("self-play hands/s (play_batch):")
    for pol in ("greedy", "greedy_safe", f"tuned:{rules}", f"learned:{net}", "random"):
        print(f"  {pol.replace(tmp + '/', ''):<20} {selfplay_rate(rules, pol, args.hands):10,.0f}")
    print("µs per decision (the same states of greedy play, own turns and claims):")
    for pol, us in decision_cost(rules, ["greedy", f"tuned:{rules}", f"learned:{net}"]).items():
        print(f"  {pol.replace(tmp + '/', ''):<20} {us:10.2f}")
    for pol in ("greedy,greedy_safe", f"greedy,tuned:{rules}", "random,greedy,greedy_safe,random"):
        a, s = arena_vs_simulate(rules, pol, args.hands)
        print(f"match vs simulate, {pol}: {a:,.0f} vs {s:,.0f} hands/s = {a / s:.0%}")
    c = rollout_cost(rules, args.mc_states, args.mc)
    print(f"search bot: {c['us_per_rollout']:,.0f} µs per rollout ({c['rollouts_per_s']:,.0f} rollouts/s per core); "
          f"mc:{args.mc}: {c['ms_per_decision']:.1f} ms per own-turn decision")
    print(f"mc:{args.mc} seat among greedy: {mc_hand_cost(rules, args.mc, args.mc_hands) * 1e3:,.0f} ms per hand")


if __name__ == "__main__":
    main()
