"""Watching a hand (issue 28 items 1-3): ``caishen replay`` of a run's hand and of a hand log, the text
table, the replay page in headless Chromium, ``caishen play`` driven by scripted input, bad input."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess

import pytest

from caishen import cli
from caishen.agents.play import play
from caishen.sim.analysis import replay
from caishen.sim.analysis.replay_html import write_html
from caishen.sim.engine import Game
from caishen.sim.selfplay import records, runner, stream

KAIHUA_POLICIES = "always,greedy,random,threshold:20"  # an always-飘 seat: hands with a 飘 (K-6.5)
JIATING_POLICIES = "greedy,random,greedy,greedy"  # greedy seats declare 架听 / 硬子 (J-4.1, J-4.2)


def _run(tmp, rules, policies):
    out = tmp / f"run_{rules}"
    runner.run(runner.make_config(rules, 40, 5, policies=policies, chunk_size=20), out, workers=1)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    return {"kaihua": _run(tmp, "kaihua", KAIHUA_POLICIES), "jiating": _run(tmp, "jiating", JIATING_POLICIES)}


def _first(run_dir, prefix):
    """hand_id of the first stored hand with a non-zero ``prefix_s`` column (a 飘, a declaration)."""
    df = stream.read_run(run_dir)
    hit = df[[f"{prefix}_{s}" for s in range(4)]].ne(0).any(axis=1)
    assert hit.any(), f"no hand with {prefix} in the test run"
    return int(df.loc[hit.idxmax(), "hand_id"]), df.loc[hit.idxmax()].to_dict()


def _tiles_conserved(frame):
    n = frame["tiles_left"]
    for s in frame["seats"]:
        n += len(s["hand"]) + sum(4 if t.startswith("kong") else 3 for t, _ in s["melds"])
        n += sum(1 for _, claimed in s["discards"] if not claimed)
    return n


@pytest.mark.parametrize("rules,prefix", [("kaihua", "piao"), ("jiating", "decl")])
def test_run_hand_replayed_equals_stored_row(runs, rules, prefix):
    hid, row = _first(runs[rules], prefix)
    trace = replay.from_run(runs[rules], str(hid))
    for k, v in trace.result.items():
        if k != "next_dealer":
            assert row[k] == v, k
    assert any(s[prefix if prefix == "decl" else "piao_count"] for s in trace.frames[-1]["seats"])
    assert [s["score"] for s in trace.frames[-1]["seats"]] == [row[f"score_{p}"] for p in range(4)]
    # the same hand addressed by chunk and index
    chunk, index = divmod(hid, 20)
    again = replay.from_run(runs[rules], f"{chunk}:{index}")
    assert again.frames == trace.frames
    # 136 tiles at every step: the wall left, hands, melds, unclaimed discards
    assert [_tiles_conserved(f) for f in trace.frames] == [136] * len(trace.frames)


def test_replay_refuses_a_row_the_replay_does_not_reproduce(runs, monkeypatch):
    real = replay._stored_row

    def changed(*a):
        row = real(*a)
        row["score_0"] += 1
        return row

    monkeypatch.setattr(replay, "_stored_row", changed)
    with pytest.raises(ValueError, match="replayed score_0 is .* but the run stored"):
        replay.from_run(runs["kaihua"], "3")


def test_hand_log_replay_and_damaged_log(tmp_path):
    g = Game("kaihua").reset(seed=11)
    while not g.done:
        g.step(g.legal_actions()[-1])
    log = tmp_path / "hand.jsonl"
    g.write_log(log)
    trace = replay.load(log)
    assert trace.result == g.record
    assert len(trace.frames) == sum(e["event"] == "action" for e in g.events) + 1
    lines = log.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    ev = json.loads(lines[3])
    ev["action"] = (ev["action"] + 1) % 40
    bad.write_text("\n".join([*lines[:3], json.dumps(ev), *lines[4:]]) + "\n")
    with pytest.raises(ValueError, match="not a replayable hand log"):
        replay.load(bad)
    bad.write_text(lines[0][:50] + "\n")
    with pytest.raises(ValueError, match="not a replayable hand log"):
        replay.load(bad)
    with pytest.raises(ValueError, match="--hand is for run directories"):
        replay.load(log, "3")
    bad.write_text("\n".join(lines[:5]) + "\n")  # cut before the hand's end
    with pytest.raises(ValueError, match="ends before the hand does"):
        replay.load(bad)
    reset = json.loads(lines[0])
    for key in ("seed", "match_hand", "streak"):  # keys the engine's replay takes as optional
        del reset[key]
    bad.write_text("\n".join([json.dumps(reset), *lines[1:]]) + "\n")
    assert replay.load(bad).result == g.record
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    with pytest.raises(ValueError, match="symbolic link"):
        replay.load(link)


def test_K_5_3_seat_view_hides_other_seats_tiles(runs):
    trace = replay.from_run(runs["kaihua"], "0")
    full = replay.render_text(trace)
    view = replay.render_text(trace, seat=2)
    f0 = trace.frames[0]
    for p in range(4):
        if p != 2:
            assert f"seat {p}: [{len(f0['seats'][p]['hand'])} tiles]" in view
            assert f"seat {p}: [" not in full
    assert "result:" in view and "scores: seat 0" in view


def _cli_error(capsys, *argv):
    with pytest.raises(SystemExit) as e:
        cli.main(["replay", *argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_replay_cli_bad_input(runs, tmp_path, capsys):
    run = runs["kaihua"]
    assert "no such run directory" in _cli_error(capsys, str(tmp_path / "none"), "--hand", "1")
    assert "hands 0..39" in _cli_error(capsys, str(run), "--hand", "40")
    assert "chunk 1 has hands 0..19" in _cli_error(capsys, str(run), "--hand", "1:20")
    assert "CHUNK:INDEX" in _cli_error(capsys, str(run), "--hand", "x")
    assert "--seat" in _cli_error(capsys, str(run), "--hand", "1", "--seat", "4")
    link = tmp_path / "page.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    assert "symbolic link" in _cli_error(capsys, str(run), "--hand", "1", "--quiet", "--html", str(link))
    assert not (tmp_path / "elsewhere.html").exists()
    # a page that cannot be written is named before the hand is replayed and printed
    err = _cli_error(capsys, str(run), "--hand", "1", "--html", str(tmp_path / "no" / "dir" / "x.html"))
    assert "no such folder" in err
    # a damaged copy: a chunk file cut short, then a planted link
    bad = tmp_path / "damaged"
    shutil.copytree(run, bad)
    p = records.chunk_path(bad, 1)
    p.write_bytes(p.read_bytes()[:100])
    assert "chunk 1" in _cli_error(capsys, str(bad), "--hand", "25")
    os.symlink("/etc/passwd", bad / "planted")
    assert "planted" in _cli_error(capsys, str(bad), "--hand", "3")
    # a run.json that is no JSON
    (tmp_path / "rj").mkdir()
    (tmp_path / "rj" / "run.json").write_text("{nope")
    assert "run.json" in _cli_error(capsys, str(tmp_path / "rj"), "--hand", "0")


def test_replay_cli_prints_the_hand(runs, capsys, tmp_path):
    assert cli.main(["replay", str(runs["jiating"]), "--hand", "1:4", "--html", str(tmp_path / "j.html")]) == 0
    out = capsys.readouterr().out
    assert out.count("step ") >= 10 and "result:" in out and "replay page:" in out
    assert (tmp_path / "j.html").read_text().startswith("<!DOCTYPE html>")


# ---------------------------------------------------------------------------
# caishen play, driven by scripted input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_play_scripted_stdin_to_the_end(rules, tmp_path):
    answers = io.StringIO("x\n99\n" + "9" * 5000 + "\n" + "0\n" * 400)  # bad answers are asked again
    out = io.StringIO()
    trace = play(rules, seat=1, seed=3, hint=True, stdin=answers, out=out, html=tmp_path / "p.html")
    text = out.getvalue()
    assert trace.result is not None and trace.frames[-1]["phase"] == "done"
    assert "not an action: 'x'" in text and "not an action: '99'" in text and "hint: shanten" in text
    assert text.count("not an action") == 3
    assert "[0] " in text and "the hand is over" in text and "result:" in text
    assert "the replay:" not in text  # the whole hand only on request (caishen play --replay, or typed replay)
    mine = [f for f in trace.frames if f["action"] and f["action"]["seat"] == 1]
    assert mine and all(f["action"]["name"] == f["legal"][0] for f in mine)
    assert (tmp_path / "p.html").exists()


def test_play_input_ends_early():
    """End of input leaves the hand unfinished, as ``quit`` does (issue 45): no error, nothing scored."""
    out = io.StringIO()
    assert play("kaihua", seat=0, seed=3, stdin=io.StringIO(""), out=out) is None
    assert "left unfinished" in out.getvalue()


# ---------------------------------------------------------------------------
# the replay page in a real browser (issue 28 item 3)
# ---------------------------------------------------------------------------
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and os.access(p, os.X_OK)), None)


def _dom(page, step, seat, profile):
    url = f"{page.as_uri()}#step={step}&seat={seat}"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-default-apps", "--disable-sync", "--no-first-run",
           "--disable-extensions", f"--user-data-dir={profile}", "--dump-dom", url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def _seats(dom):
    """Per seat: (data-concealed, hand tiles drawn, face-down hand tiles, the seat's text) from the DOM."""
    parts = re.split(r'<div class="seat[^"]*" id="seat-(\d)"', dom)[1:]
    out = {}
    for p, body in zip(parts[::2], parts[1::2]):
        hand = body.split('class="melds"')[0].split('class="discards"')[0]
        tiles = re.findall(r'<g class="tile hand-tile"[^>]*data-kind="(-?\d+)"', hand)
        concealed = int(re.search(r'data-concealed="(\d+)"', body).group(1))
        out[int(p)] = (concealed, len(tiles), sum(t == "-1" for t in tiles), re.sub("<[^>]+>", " ", body))
    return out


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")
@pytest.mark.parametrize("rules,prefix", [("kaihua", "piao"), ("jiating", "decl")])
def test_replay_page_in_headless_chromium(runs, rules, prefix, tmp_path):
    hid, row = _first(runs[rules], prefix)
    trace = replay.from_run(runs[rules], str(hid))
    page = write_html(trace, tmp_path / "page.html")
    last = len(trace.frames) - 1
    # a step where the 飘 circle is open / a declaration stands, and a seat's-eye view
    mark = next(k for k, f in enumerate(trace.frames)
                if any(s["piao_open"] if prefix == "piao" else s["decl"] for s in f["seats"]))
    for step, seat in [(0, -1), (last // 2, 1), (mark, -1), (last, -1)]:
        dom = _dom(page, step, seat, tmp_path / "profile")
        assert f'data-step="{step}"' in dom
        seats = _seats(dom)
        assert sorted(seats) == [0, 1, 2, 3]
        for p, (concealed, drawn, backs, text) in seats.items():
            want = len(trace.frames[step]["seats"][p]["hand"])
            assert concealed == want and drawn == want, (step, p)
            assert backs == (want if seat not in (-1, p) else 0), (step, p)
        if step == mark:
            flagged = [p for p, s in enumerate(trace.frames[step]["seats"])
                       if (s["piao_open"] if prefix == "piao" else s["decl"])]
            word = ("piao circle open" if prefix == "piao"
                    else replay.DECL_NAMES[trace.frames[step]["seats"][flagged[0]]["decl"]])
            assert word in seats[flagged[0]][3]
        if step == last:
            scores = dict(re.findall(r'<td class="final-score" data-seat="(\d)">(-?\d+)</td>', dom))
            assert {int(p): int(v) for p, v in scores.items()} == {p: row[f"score_{p}"] for p in range(4)}
        else:
            assert "<td class=\"final-score\"" not in dom


MATCH_POLICIES = {"kaihua": "always,random,learned:kaihua", "jiating": "greedy,random,tuned:jiating"}


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_match_wall_replayed_equals_stored_row(rules, tmp_path, capsys):
    """A match's hand (issue 28 item 1, "a match wall"): wall w in seating r of a chunk is re-played from the
    chunk's wall seed and the seating's bots' seed after the seating's earlier walls, every column checked
    (:func:`replay.from_run` refuses a mismatch); the same wall in every seating has the same deal."""
    out = tmp_path / "m"
    assert cli.main(["match", "--rules", rules, "--policies", MATCH_POLICIES[rules], "--walls", "6",
                     "--chunk-walls", "3", "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    named = re.findall(r"the largest win .*: caishen replay (\S+) --hand (\S+)", printed)  # the summary's examples
    assert named and named[0][0] == str(out), printed
    assert replay.from_run(out, named[0][1]).frames[-1]["to_act"] == -1
    df = stream.read_run(out)
    n_s = 24  # three policies, the default schedule: every order of A B C A in four rotations
    assert len(df) == 6 * n_s
    starts = []
    for hid in range(5 * n_s, 6 * n_s):  # the last wall, in each seating
        trace = replay.from_run(out, str(hid))
        row = df[df.hand_id == hid].iloc[0]
        assert [s["score"] for s in trace.frames[-1]["seats"]] == [row[f"score_{p}"] for p in range(4)]
        assert f"seating {hid % n_s}" in trace.source
        starts.append([s["hand"] for s in trace.frames[0]["seats"]])
        assert [_tiles_conserved(f) for f in trace.frames] == [136] * len(trace.frames)
    assert all(s == starts[0] for s in starts)  # duplicate deal: the same tiles in every seating
    again = replay.from_run(out, f"1:{2 * n_s + 1}")  # hand_id 5 * n_s + 1 addressed by chunk and index
    assert again.frames == replay.from_run(out, str(5 * n_s + 1)).frames


def test_ladder_pair_hand_replays_and_the_ladder_folder_names_its_pairs(tmp_path, capsys):
    out = tmp_path / "lad"
    assert cli.main(["ladder", "--rules", "kaihua", "--bots", "greedy,random", "--walls", "2", "--chunk-walls", "2",
                     "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    capsys.readouterr()
    trace = replay.from_run(out / "pairs" / "00-01", "3")
    assert "seating 1" in trace.source and trace.frames[-1]["to_act"] == -1
    err = _cli_error(capsys, str(out), "--hand", "0")
    assert "is a `caishen ladder`" in err and "00-01" in err


def test_replay_names_a_sweep_point_it_cannot_replay(tmp_path, capsys):
    """A sweep point's hands are not replayable: the error says what the run is, in the commands' terms."""
    assert cli.main(["sweep", "--rules", "kaihua", "--policy", "greedy,random", "--walls", "4",
                     "--workers", "1", "--no-progress", "--out", str(tmp_path / "s")]) == 0
    capsys.readouterr()
    points = sorted(p for p in (tmp_path / "s").rglob("run.json"))
    assert points, "the sweep wrote no point run"
    err = _cli_error(capsys, str(points[0].parent), "--hand", "0")
    assert "sweep" in err and "simulate" in err and "match" in err


def test_run_hand_with_bots_that_play_with_data(tmp_path):
    """A simulate run's seats with data (learned weights, the search bot's stream) re-play as the batch played
    them: the replay builds the bot context from the seats' specs, as ``play_batch`` does."""
    out = tmp_path / "data_bots"
    runner.run(runner.make_config("kaihua", 10, 3, policies="learned:kaihua,mc:4,greedy,random", chunk_size=5),
               out, workers=1)
    for hid in ("2", "7"):
        trace = replay.from_run(out, hid)  # refuses a record that differs from the stored row
        assert trace.frames[-1]["to_act"] == -1


def test_frame_lines_wrap_a_long_list_of_offers_at_100_columns():
    """Issue 45: a turn offers many actions; the "may:" line wraps at 100 columns, every action kept."""
    from caishen.sim.analysis.replay import frame_lines
    from caishen.sim.termtext import display_width

    legal = [f"discard {k}m" for k in range(1, 10)] + [f"kong_concealed {k}p" for k in range(1, 10)] + ["self_draw_win"]
    seat = {"dealer": False, "decl": 0, "piao_open": False, "piao_count": 0, "hand": [0, 1, 2], "melds": [],
            "discards": []}
    frame = {"step": 3, "phase": "turn", "tiles_left": 50, "pending": None, "seats": [seat] * 4, "to_act": 1,
             "drawn": -1, "legal": legal, "action": None}
    lines = frame_lines(frame)
    may = [x for x in lines if " may: " in x or x.startswith(" " * 14)]
    assert len(may) > 1 and max(display_width(x) for x in lines) <= 100
    assert " ".join(x.strip() for x in may) == "seat 1 may: " + ", ".join(legal)
