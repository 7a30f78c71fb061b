"""``caishen report``: figures and a self-contained HTML page for simulate runs, sweeps and studies."""

from __future__ import annotations

import html

import pytest

from caishen.sim.analysis import report
from caishen.sim.selfplay import runner
from caishen.sim.selfplay.runner import Execution


def _simulate(out, rules="kaihua", games=320):
    config = runner.make_config(rules, games, 1, policies="greedy", chunk_size=160)
    runner.run(config, out, workers=1, progress=False)
    return out


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_report_of_a_simulate_run(engine_warm, tmp_path, rules):
    out = _simulate(tmp_path / "r", rules)
    page = report.write_report(out)
    text = page.read_text(encoding="utf-8")
    assert page.name == "report.html" and text.count("data:image/png;base64,") >= 3
    pngs = sorted(p.name for p in out.glob("fig-*.png"))
    assert {"fig-score.png", "fig-gain.png"} <= set(pngs)
    assert ("fig-patterns.png" in pngs) == (rules == "jiating") and ("fig-hand-types.png" in pngs) == (rules == "kaihua")
    assert ("fig-piao.png" in pngs) == (rules == "kaihua")  # the 飘财 figure (K-9), issue 28
    # a CJK font fallback stated on the page, with the pinyin of the Chinese terms beside them
    assert f"font-family:{report.CJK_FONTS}" in text and '"Noto Sans CJK SC"' in report.CJK_FONTS
    assert "without a CJK font it shows as boxes" in text and "流局 liuju" in text
    assert ("飘财 piaocai" in text) == (rules == "kaihua") and ("架听 jiating" in text) == (rules == "jiating")
    assert (out / "summary.csv").exists()
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporary file


def test_report_page_covers_every_hand(engine_warm, tmp_path):
    """Issue 15: the page's balance tables and figures stream over all hands of every verified chunk (no prefix
    of REPORT_MAX_HANDS any more); its tables are the in-memory tables of all rows."""
    import numpy as np
    import pandas as pd

    from caishen.sim.analysis import balance
    from caishen.sim.rules.kaihua import analysis as KA
    from caishen.sim.selfplay import stream

    out = _simulate(tmp_path / "r", games=480)
    text = report.write_report(out).read_text(encoding="utf-8")
    assert "covers all 480 hands" in text and "read the first" not in text
    assert not hasattr(report, "REPORT_MAX_HANDS") and not hasattr(report, "_leading_rows")
    df = stream.read_run(out)
    want = KA.balance(df)
    assert want.to_html(index=False, float_format=lambda v: "{:.4g}".format(v), na_rep="", border=0,
                        classes="t") in text  # the page's balance table, over all 480 hands
    gain = report.GainCounts()
    for lo in range(0, len(df), 160):
        gain.add(df.iloc[lo:lo + 160])
    sc = np.stack([df[f"score_{s}"] for s in range(4)], axis=1)
    g = np.where(sc > 0, sc, 0).sum(axis=1)[df["win_type"] >= 0]
    assert gain.hands == 480 and gain.counts.sum() == len(g)
    np.testing.assert_array_equal(gain.counts, np.histogram(g, report.GAIN_EDGES)[0])
    pd.testing.assert_frame_equal(balance.run_tables(out)["balance"], want, rtol=1e-9)


def test_gain_counts_bins_are_fixed_and_catch_everything():
    import numpy as np
    import pandas as pd

    e = report.GAIN_EDGES
    assert e[0] == -0.5 and list(e[1:12]) == [0.5 + k for k in range(11)] and np.all(np.diff(e) > 0)
    big = 2 ** 45
    df = pd.DataFrame({"win_type": [0, 1, -1, 0], "score_0": [3, -1, 0, big], "score_1": [-1, 1, 0, -big],
                       "score_2": [-1, 0, 0, 0], "score_3": [-1, 0, 0, 0]})
    c = report.GainCounts().add(df).counts
    assert c.sum() == 3 and c[3] == 1 and c[1] == 1 and c[-1] == 1  # gains 3, 1; 2**45 in the last bin


def test_report_of_a_sweep_and_of_a_study(engine_warm, tmp_path):
    from caishen.sim.analysis import piao_study, study

    s = tmp_path / "s"
    study.sweep("kaihua", s, policies="always,never", walls=40, chunk_size=40,
                execution=Execution(1, progress=False))
    text = report.write_report(s).read_text(encoding="utf-8")
    assert 'alt="sweep-score"' in text and (s / "fig-sweep-score.png").exists()
    for metric, unit in study.metric_units("kaihua").items():  # every sweep figure with its metric's unit
        assert html.escape(f"{metric} ({unit}) by grid point") in text, metric
    p = tmp_path / "p"
    piao_study.run_study(200, 1, 1, out=p, execution=Execution(1, progress=False))
    assert report.run_kind(p) == "study"
    report.write_report(p)
    assert (p / "fig-study-tiles_left.png").exists() and (p / "report.html").exists()


def test_report_refuses_other_directories_and_unfinished_sweeps(tmp_path):
    with pytest.raises(ValueError, match="is not a run directory"):
        report.write_report(tmp_path)
    assert not (tmp_path / "report.html").exists()
    from caishen.sim.analysis import study

    s = tmp_path / "s"
    s.mkdir()
    (s / study.SWEEP_JSON).write_text("{}")
    with pytest.raises(ValueError, match="has not finished"):
        report.write_report(s)
    assert not (s / "report.html").exists() and not list(s.glob("fig-*"))


def test_report_cli(engine_warm, tmp_path, capsys):
    from caishen.cli import main

    out = _simulate(tmp_path / "r")
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "finished chunks: 2 of 2" in text and "report:" in text and "飘财 observational" in text
    with pytest.raises(SystemExit) as e:
        main(["report", str(tmp_path / "nowhere")])
    assert e.value.code == 2


def test_report_section_prints_one_section_and_names_the_others(engine_warm, tmp_path, capsys):
    """``caishen report --section NAME`` (issue 28): the rows of that section only, no figures; an unknown
    name exits 2 listing every section; a sweep has no sections to pick."""
    from caishen.cli import main
    from caishen.sim.analysis import summary

    out = _simulate(tmp_path / "r")
    rows, _, _, _ = summary.summarize_run(out)
    names = list(dict.fromkeys(rows["section"]))
    assert len(names) >= 3 and "飘财 observational" in names
    assert main(["report", str(out), "--section", "飘财 observational"]) == 0
    text = capsys.readouterr().out
    body = text.splitlines()[3:]  # header (2 lines), column names
    assert body[0] == "飘财 observational"  # the section's name on its own line, then its rows (issue 45)
    assert len(body) - 1 == (rows["section"] == "飘财 observational").sum() >= 1
    assert all(line.startswith("  ") for line in body[1:]), body
    assert not list(out.glob("fig-*.png")) and not (out / "report.html").exists()
    first = names[0]
    assert main(["report", str(out), "--section", first.upper()]) == 0  # case ignored
    body = capsys.readouterr().out.splitlines()[3:]
    assert body[0] == first and all(line.startswith("  ") for line in body[1:])
    with pytest.raises(SystemExit) as e:
        main(["report", str(out), "--section", "no such"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "'no such'" in err and all(repr(n) in err for n in names)
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("rules, options", [("kaihua", {"max_exponent": 1}), ("jiating", {"cap": 40})])
def test_summary_names_example_hands_to_replay(engine_warm, tmp_path, capsys, rules, options):
    """The summary names example hands (issue 28) as ``caishen replay RUN --hand CHUNK:INDEX``: the largest win,
    and the rule set's own (K-9.3 a failed 飘 and a K-6.6 capped win; a J-4.2 硬子 and a J-6.2 capped win), each
    the first such hand of the run, found here again with pandas; replaying a named hand shows that hand."""
    import re

    import numpy as np
    import pandas as pd

    from caishen.cli import main
    from caishen.sim.analysis import summary

    out = tmp_path / "r"
    pol = "always,greedy,always,greedy" if rules == "kaihua" else "greedy"
    runner.run(runner.make_config(rules, 600, 3, policies=pol, options=options, chunk_size=200), out, workers=1,
               progress=False)
    df = pd.read_parquet(out / "chunks").sort_values("hand_id").reset_index(drop=True)
    scores = df[[f"score_{s}" for s in range(4)]].to_numpy()
    want = {"the largest win": int(scores.max(axis=1).argmax())}
    if rules == "kaihua":
        want["a failed 飘"] = int(np.flatnonzero(df[[f"failed_piao_{s}" for s in range(4)]].to_numpy().any(axis=1))[0])
        want["a capped win"] = int(np.flatnonzero((df["winner"] >= 0) & (df["exponent"] >= 1))[0])
    else:
        pg = df[[f"P_{s}" for s in range(4)]].to_numpy() + df[[f"G_{s}" for s in range(4)]].to_numpy()
        want["a capped win"] = int(np.flatnonzero((pg > 40).any(axis=1))[0])
    lines = summary.example_hands(out, batch_size=70)  # batches cut the chunks: the first hand is still found
    for label, row in want.items():
        line = next(x for x in lines if x.startswith(label))
        hand = re.search(rf"caishen replay {re.escape(str(out))} --hand (\d+):(\d+)$", line)
        assert hand, line
        assert (int(hand[1]), int(hand[2])) == (int(df["chunk"][row]), int(df["hand"][row])), (label, line)
    assert f"+{scores.max()} points" in lines[0]
    assert main(["report", str(out), "--no-figures"]) == 0
    text = capsys.readouterr().out
    assert "example hands" in text and all(x in text for x in lines)
    chunk, index = re.search(r"--hand (\d+):(\d+)", lines[0]).groups()
    assert main(["replay", str(out), "--hand", f"{chunk}:{index}"]) == 0
    assert f"+{scores.max()}" in capsys.readouterr().out


def test_figures_gain_without_a_negative_half_hand_type_titles_and_no_overlapping_pattern_labels():
    """Issue 28: the winner's-gain axis starts at the zero bin; each hand-type panel has a title; no two
    Jiating pattern labels overlap (as matplotlib draws them), and patterns that never fired are listed."""
    import numpy as np
    import pandas as pd

    from caishen.sim.rules.jiating import analysis as JA
    from caishen.sim.rules.kaihua import analysis as KA

    plt = report._plt()
    counts = np.zeros(len(report.GAIN_EDGES) - 1, np.int64)
    counts[[2, 5, 30]] = [10, 4, 1]
    ax = report._gain_figure(plt, counts).axes[0]
    assert ax.get_xlim()[0] == -0.5
    rng = np.random.default_rng(3)
    ids = [f"P{i:02d}" for i in range(1, 51)]
    freq = np.r_[10 ** rng.uniform(-4, 0, 40), [0.002] * 6, [0] * 4]  # 6 on one spot, 4 that never fired
    pts = np.r_[10 ** rng.uniform(0, 2.3, 40), [20] * 6, [0] * 4]
    pat = pd.DataFrame({"pattern": ids, "fires": (freq > 0) * 7, "frequency": freq, "freq_low": freq / 2,
                        "freq_high": freq * 1.5, "points": pts})
    fig = JA.pattern_figure(plt, pat)
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in fig.axes[0].texts]
    shown = " ".join(t.get_text() for t in fig.axes[0].texts).split()
    assert sorted(shown) == ids[:46]  # every pattern that fired is labelled once
    overlaps = [(i, j) for i in range(len(boxes)) for j in range(i) if boxes[i].overlaps(boxes[j])]
    assert overlaps == [], [(fig.axes[0].texts[i].get_text(), fig.axes[0].texts[j].get_text()) for i, j in overlaps]
    assert [x.split()[0] for x in JA.never_fired(pat)] == ids[46:]
    types = pd.DataFrame({"section": "hand type", "metric": ["frequency", "share of points"] * 2,
                          "group": ["平胡 pinghu (K-6.1)"] * 2 + ["爆头 baotou (K-6.2)"] * 2, "n": 10,
                          "value": [0.5, 0.4, 0.1, 0.2], "ci_low": 0.05, "ci_high": 0.6})

    class Page:
        figs = []

        def heading(self, s):
            pass

        def table(self, df):
            pass

        def figure(self, fig, name, caption):
            self.figs.append(fig)

    page = Page()
    KA._type_figures(page, plt, types)
    assert all(a.get_title() for a in page.figs[0].axes)


def test_numbers_read_for_people():
    """Issue 45: tables never print 1e+05; integers are grouped, small values keep four digits."""
    assert report.number(100000.0) == "100,000" and report.number(1234567) == "1,234,567"
    assert report.number(0.0123456) == "0.01235" and report.number(1.4712) == "1.471" and report.number(3.0) == "3"
    assert report.number(float("nan")) == "" and "e+" not in report.number(2.5e7)
    assert report.options_text({}) == "the defaults" and report.options_text({"cap": None}) == "cap=None"


def test_page_opens_with_its_headline_and_figures_carry_bots_size_seed(engine_warm, tmp_path):
    """Issue 45: the headline (bots, size, seed, the dealer's edge with its CI) comes first, the font note
    last, the options read as K=V, and each figure carries the run's bots, size and seed."""
    out = _simulate(tmp_path / "r")
    text = report.write_report(out).read_text(encoding="utf-8")
    body = text.split("<body>", 1)[1]
    assert body.index("class='headline'") < body.index("<figure>") < body.index("class='fonts'")
    assert "greedy,greedy,greedy,greedy at the seats, 320 hands (seed 1): the dealer scores" in html.unescape(text)
    assert "rule options the defaults" in html.unescape(text) and "{}" not in html.unescape(text)
    tables = [t.split("</table>", 1)[0] for t in text.split("<table")[1:]]
    assert tables and not any("e+0" in t for t in tables)
    plt = report._plt()
    counts = __import__("numpy").zeros(len(report.GAIN_EDGES) - 1, "int64")
    counts[[2, 5, 30]] = [10, 4, 1]
    ax = report._gain_figure(plt, counts).axes[0]
    assert ax.get_xlim()[1] <= report.GAIN_EDGES[31] + 1  # the axis ends at the last bin used


def test_the_figure_stamp_overlaps_no_axes_labels(tmp_path):
    """Issue 45: the stamp (rules, bots, size, seed) sits under every axes with its tick and axis labels (a bar
    figure with rotated long labels, like fig-piao.png), and the saved PNG holds it whole."""
    import numpy as np
    from PIL import Image

    plt = report._plt()
    labels = ["attempt rate (per seat-hand, K-9.1)", "failed rate (per attempt, K-9.3)", "success rate"]
    fig = report._bars(plt, labels, [0.2, 0.5, 0.1], [0.1, 0.4, 0.05], [0.3, 0.6, 0.15], "piao", "share")
    page = report._Page(tmp_path, "t")
    page.label = "kaihua, greedy,greedy,always,never, 200,000 hands, seed 7"
    page.figure(fig, "piao", "caption")
    stamp = fig.texts[-1]
    assert stamp.get_text() == page.label
    box = stamp.get_window_extent()
    axes = [ax.get_tightbbox() for ax in fig.axes]  # each with its tick labels and axis labels
    assert axes and all(not box.overlaps(a) and box.y1 <= a.y0 for a in axes), (box, axes)
    w, h = Image.open(tmp_path / "fig-piao.png").size
    tight = fig.get_tightbbox()  # inches: what bbox_inches="tight" saved (plus its padding), stamp included
    assert tight.y0 <= box.y0 / fig.dpi and w >= tight.width * 110 and h >= tight.height * 110
    png = np.asarray(Image.open(tmp_path / "fig-piao.png").convert("L"))
    assert png[-25:, w // 2:].min() < 128  # drawn: dark pixels in the bottom right, under every label


def test_report_of_a_ladder_and_of_a_piao_folder(engine_warm, tmp_path, capsys):
    """Issue 45: `caishen report` reads a ladder folder and a `caishen piao` folder: their summaries, and a
    page with their figures and tables."""
    from caishen.cli import main

    lad = tmp_path / "ladder"
    assert main(["ladder", "--rules", "kaihua", "--bots", "random,greedy", "--walls", "6", "--chunk-walls", "6",
                 "--workers", "1", "--bootstrap", "50", "--out", str(lad), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(lad)]) == 0
    out = capsys.readouterr().out
    assert "# Ladder: kaihua, 2 bots" in out and "report:" in out
    page = html.unescape((lad / "report.html").read_text(encoding="utf-8"))
    assert "a ladder of 2 bots (random, greedy: the field every rating is against)" in page
    assert page.count("data:image/png;base64,") == 1
    pi = tmp_path / "piao"
    assert main(["piao", "--rules", "kaihua", "--hands", "60", "--rollouts", "1", "--check-walls", "0",
                 "--workers", "1", "--out", str(pi), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(pi)]) == 0
    out = capsys.readouterr().out
    assert "EV of 飘 minus keep per chance" in out
    page = html.unescape((pi / "report.html").read_text(encoding="utf-8"))
    assert "飘 now minus keep now is" in page and "By situation" in page
