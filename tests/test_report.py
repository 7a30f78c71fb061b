"""``caishen report``: figures and a self-contained HTML page for simulate runs, sweeps and studies."""

from __future__ import annotations

import pytest

from caishen.sim import report, runner


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
    assert (out / "summary.csv").exists()
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporary file


def test_report_page_reads_at_most_REPORT_MAX_HANDS_and_says_so(engine_warm, tmp_path, monkeypatch):
    """Issue 15: the page's figures and balance tables read whole leading chunks up to REPORT_MAX_HANDS (memory
    bounded), the page says how many of how many hands; the summary itself still covers every hand."""
    out = _simulate(tmp_path / "r", games=480)
    monkeypatch.setattr(report, "REPORT_MAX_HANDS", 200)
    df, n_all = report._leading_rows(out, ["hand_id", "score_0"])
    assert n_all == 480 and len(df) == 160 and df["hand_id"].tolist() == list(range(160))
    text = report.write_report(out).read_text(encoding="utf-8")
    assert "covers all 480 hands" in text and "read the first 160" in text
    monkeypatch.setattr(report, "REPORT_MAX_HANDS", 10**9)
    assert "read the first" not in report.write_report(out).read_text(encoding="utf-8")


def test_report_of_a_sweep_and_of_a_study(engine_warm, tmp_path):
    from caishen.sim import piao_study, study

    s = tmp_path / "s"
    study.sweep("kaihua", s, policies="always,never", walls=40, chunk_size=40, workers=1, progress=False)
    text = report.write_report(s).read_text(encoding="utf-8")
    assert 'alt="sweep-score"' in text and (s / "fig-sweep-score.png").exists()
    p = tmp_path / "p"
    piao_study.run_study(200, 1, 1, workers=1, out=p, progress=False)
    assert report.run_kind(p) == "study"
    report.write_report(p)
    assert (p / "fig-study-tiles_left.png").exists() and (p / "report.html").exists()


def test_report_refuses_other_directories_and_unfinished_sweeps(tmp_path):
    with pytest.raises(ValueError, match="is not a run directory"):
        report.write_report(tmp_path)
    assert not (tmp_path / "report.html").exists()
    from caishen.sim import study

    s = tmp_path / "s"
    s.mkdir()
    (s / study.SWEEP_JSON).write_text("{}")
    with pytest.raises(ValueError, match="has not finished"):
        report.write_report(s)
    assert not (s / "report.html").exists() and not list(s.glob("fig-*"))


def test_report_cli(engine_warm, tmp_path, capsys):
    from caishen.sim.cli import main

    out = _simulate(tmp_path / "r")
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "finished chunks: 2 of 2" in text and "report:" in text and "飘财 observational" in text
    with pytest.raises(SystemExit) as e:
        main(["report", str(tmp_path / "nowhere")])
    assert e.value.code == 2
