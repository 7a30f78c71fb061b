"""The replay page: one self-contained HTML file that steps through a hand (:class:`~caishen.sim.analysis.replay.Trace`).

The page holds the trace as JSON and a script that draws it: every tile is
an SVG group drawn by the page itself (pips for 筒 pin, sticks for 条 sou,
the rank and an ``m`` for 万 man, letters for the honours: E S W N, a framed
blank for 白, ``F`` for 發, ``C`` for 中; the 财神 framed in gold), so it
needs no network, no image and no font beyond the browser's default
sans-serif (Chinese labels carry their pinyin, for browsers without a CJK
font).  Controls: step forward / back (buttons or the arrow keys), a
seat's-eye toggle (the other seats' concealed tiles and concealed kongs
turned face down, K-5.3), the claims offered at each step, each seat's 飘
circle (K-6.5), and the score breakdown at the end.  The address fragment
``#step=K&seat=S`` opens a given step and view (the browser test uses it).

What the page shows can be read from its DOM: ``#seat-P`` carries
``data-concealed`` (the concealed tiles drawn) and its ``.hand`` holds one
``g.tile`` per tile; ``#step`` the step shown; at the end
``td.final-score[data-seat=P]`` the record's score of seat P.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from caishen.sim import safeio
from caishen.sim.analysis.replay import DECL_NAMES, Trace, breakdown

_STYLE = """
body { font-family: sans-serif, "Noto Sans CJK SC", "Microsoft YaHei", "PingFang SC"; margin: 1em; background: #f4f1ea; }
#controls button, #controls select { font-size: 1em; margin-right: .4em; }
.seat { margin: .4em 0; padding: .3em .5em; background: #fff; border: 1px solid #ccc; border-radius: 6px; }
.seat.to-act { border: 2px solid #c60; }
.seat .label { font-weight: bold; margin-right: 1em; }
.seat .piao { color: #b00; font-weight: bold; }
.row { display: flex; gap: 1em; align-items: flex-end; flex-wrap: wrap; }
.sub { font-size: .8em; color: #666; }
#claims { margin: .4em 0; } #claims .taken { font-weight: bold; color: #c60; }
table.breakdown { border-collapse: collapse; margin: .5em 0; }
pre.explain { white-space: pre-wrap; margin: .3em 0; }
table.breakdown td, table.breakdown th { border: 1px solid #bbb; padding: 2px 6px; text-align: right; }
"""

_SCRIPT = r"""
"use strict";
const T = JSON.parse(document.getElementById("trace").textContent);
const NS = "http://www.w3.org/2000/svg";
const TW = 30, TH = 42;
const PIPS = {1: [[15,21]], 2: [[15,12],[15,30]], 3: [[8,10],[15,21],[22,32]],
  4: [[9,12],[21,12],[9,30],[21,30]], 5: [[9,10],[21,10],[15,21],[9,32],[21,32]],
  6: [[9,9],[21,9],[9,21],[21,21],[9,33],[21,33]], 7: [[7,8],[15,11],[23,14],[9,24],[21,24],[9,34],[21,34]],
  8: [[9,7],[21,7],[9,16],[21,16],[9,26],[21,26],[9,35],[21,35]],
  9: [[7,10],[15,10],[23,10],[7,21],[15,21],[23,21],[7,32],[15,32],[23,32]]};
const HONOURS = {0: ["E", "#222"], 1: ["S", "#222"], 2: ["W", "#222"], 3: ["N", "#222"], 5: ["F", "#070"], 6: ["C", "#c00"]};
const MELD_TILES = {chow: 3, pong: 3, kong_exposed: 4, kong_added: 4, kong_concealed: 4};
const DECL = T.decl_names;
let step = 0, view = -1;

function el(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = String(text);
  return e;
}
function kindName(k) { return (k % 9 + 1) + "mpsz"[Math.floor(k / 9)]; }
function tile(k, x, opts) {
  // one tile as an SVG group: k a kind 0..33, or -1 for a face-down tile
  const g = el("g", {"class": "tile" + (opts.cls ? " " + opts.cls : ""), "transform": `translate(${x},0)`,
                     "data-kind": k});
  const back = k < 0;
  g.appendChild(el("rect", {x: 1, y: 1, width: TW - 2, height: TH - 2, rx: 4,
    fill: back ? "#2e7d4f" : (opts.dim ? "#ddd" : "#fffdf5"),
    stroke: (!back && k === T.joker) ? "#d4a000" : "#555", "stroke-width": (!back && k === T.joker) ? 3 : 1}));
  if (back) return g;
  g.appendChild(el("title", {}, kindName(k) + (k === T.joker ? " (财神 caishen)" : "")));
  const suit = Math.floor(k / 9), rank = k % 9 + 1;
  if (suit === 0) {
    g.appendChild(el("text", {x: 15, y: 22, "text-anchor": "middle", "font-size": 18, "font-weight": "bold",
                              fill: "#111"}, String(rank)));
    g.appendChild(el("text", {x: 15, y: 37, "text-anchor": "middle", "font-size": 12, fill: "#c00"}, "m"));
  } else if (suit === 1) {
    PIPS[rank].forEach(([cx, cy], i) => g.appendChild(el("circle", {cx: cx, cy: cy, r: rank > 6 ? 3 : 4,
      fill: "none", stroke: i % 2 ? "#c00" : "#136", "stroke-width": 2})));
  } else if (suit === 2) {
    PIPS[rank].forEach(([cx, cy], i) => g.appendChild(el("rect", {x: cx - 1.5, y: cy - 4.5, width: 3, height: 9,
      rx: 1, fill: (rank === 1 || (rank === 5 && i === 2)) ? "#c00" : "#175"})));
  } else if (rank === 5) {
    g.appendChild(el("rect", {x: 7, y: 9, width: 16, height: 24, fill: "none", stroke: "#136", "stroke-width": 2}));
  } else {
    const [t, c] = HONOURS[rank - 1];
    g.appendChild(el("text", {x: 15, y: 28, "text-anchor": "middle", "font-size": 20, "font-weight": "bold",
                              fill: c}, t));
  }
  return g;
}
function strip(kinds, opts) {
  const svg = el("svg", {width: Math.max(1, kinds.length) * TW, height: TH});
  kinds.forEach((k, i) => svg.appendChild(tile(k, i * TW, typeof opts === "function" ? opts(i) : opts)));
  return svg;
}
function meldKinds(m, hidden) {
  const [type, k] = m;
  if (type === "chow") return [k, k + 1, k + 2];
  const n = MELD_TILES[type];
  if (type === "kong_concealed") return hidden ? [-1, -1, -1, -1] : [-1, k, k, -1];
  return Array(n).fill(k);
}
function render() {
  const f = T.frames[step];
  document.getElementById("step").textContent = String(step);
  document.getElementById("step").dataset.step = step;
  const info = document.getElementById("info");
  info.textContent = `phase ${f.phase}, ${f.tiles_left} tiles left` +
    (f.pending ? `, on offer ${kindName(f.pending[0])} from seat ${f.pending[1]}` : "") +
    (f.to_act >= 0 ? `, seat ${f.to_act} to act` : ", hand over");
  const table = document.getElementById("table");
  table.replaceChildren();
  f.seats.forEach((s, p) => {
    const own = view < 0 || view === p;
    const d = h("div", "seat" + (f.to_act === p ? " to-act" : ""));
    d.id = "seat-" + p;
    d.dataset.concealed = s.hand.length;
    const lab = h("div", "");
    lab.appendChild(h("span", "label", `seat ${p}` + (s.dealer ? " (dealer 庄 zhuang)" : "")));
    lab.appendChild(h("span", "", `score ${s.score >= 0 ? "+" : ""}${s.score}`));
    if (s.piao_open) lab.appendChild(h("span", "piao", " 飘 piao circle open"));
    if (s.piao_count) lab.appendChild(h("span", "piao", ` 飘 piao x${s.piao_count}`));
    if (s.decl) lab.appendChild(h("span", "piao", " " + DECL[s.decl]));
    d.appendChild(lab);
    const row = h("div", "row");
    const hand = own ? s.hand.slice() : s.hand.map(() => -1);
    if (own && f.drawn >= 0 && f.to_act === p) {  // the drawn tile at the right
      hand.splice(hand.indexOf(f.drawn), 1); hand.push(f.drawn);
    }
    const hs = strip(hand, {cls: "hand-tile"});
    const hw = h("div", "hand"); hw.appendChild(hs); row.appendChild(hw);
    if (s.melds.length) {
      const mw = h("div", "melds");
      s.melds.forEach((m) => mw.appendChild(strip(meldKinds(m, !own), {cls: "meld-tile"})));
      row.appendChild(mw);
    }
    d.appendChild(row);
    const dw = h("div", "discards");
    dw.appendChild(h("span", "sub", "discards "));
    dw.appendChild(strip(s.discards.map((x) => x[0]), (i) => ({cls: "discard-tile", dim: s.discards[i][1]})));
    d.appendChild(dw);
    table.appendChild(d);
  });
  const claims = document.getElementById("claims");
  claims.replaceChildren();
  if (f.to_act >= 0) {
    const who = view < 0 || view === f.to_act;
    claims.appendChild(h("span", "", `seat ${f.to_act} is offered: `));
    if (who) f.legal.forEach((a) => {
      claims.appendChild(h("span", f.action && a === f.action.name ? "taken" : "", a));
      claims.appendChild(document.createTextNode("  "));
    }); else claims.appendChild(h("span", "sub", `${f.legal.length} actions (hidden in seat ${view}'s view)`));
  }
  if (f.action) claims.appendChild(h("div", "", `-> seat ${f.action.seat}: ${f.action.name}`));
  const res = document.getElementById("result");
  res.replaceChildren();
  if (step === T.frames.length - 1) res.appendChild(breakdown());
  location.replace("#step=" + step + "&seat=" + view);
}
function breakdown() {
  const B = T.breakdown, box = h("div", "");
  box.appendChild(h("h3", "", "score breakdown"));
  box.appendChild(h("pre", "explain", B.lines.join("\n")));
  const t = h("table", "breakdown"), head = h("tr", ""), row = h("tr", "");
  head.appendChild(h("th", "", ""));
  row.appendChild(h("th", "", "score"));
  B.scores.forEach((v, p) => {
    head.appendChild(h("th", "", "seat " + p));
    const td = h("td", "final-score", v);
    td.dataset.seat = p;
    row.appendChild(td);
  });
  t.appendChild(head);
  t.appendChild(row);
  box.appendChild(t);
  return box;
}
function fromHash() {
  const q = new URLSearchParams(location.hash.slice(1));
  const s = parseInt(q.get("step") || "0", 10), v = parseInt(q.get("seat") || "-1", 10);
  step = Number.isFinite(s) ? Math.min(Math.max(s, 0), T.frames.length - 1) : 0;
  view = [0, 1, 2, 3].includes(v) ? v : -1;
  document.getElementById("view").value = String(view);
}
function go(d) { step = Math.min(Math.max(step + d, 0), T.frames.length - 1); render(); }
document.getElementById("prev").onclick = () => go(-1);
document.getElementById("next").onclick = () => go(1);
document.getElementById("view").onchange = (e) => { view = parseInt(e.target.value, 10); render(); };
document.addEventListener("keydown", (e) => { if (e.key === "ArrowLeft") go(-1); if (e.key === "ArrowRight") go(1); });
document.getElementById("nsteps").textContent = String(T.frames.length - 1);
document.getElementById("source").textContent = `${T.rules} hand, ${T.source}` +
  (T.joker >= 0 ? `; 财神 caishen ${kindName(T.joker)}` : "");
fromHash();
render();
"""

_BODY = """<div id="source"></div>
<div id="controls"><button id="prev">&#9664; back</button><button id="next">forward &#9654;</button>
step <span id="step">0</span> / <span id="nsteps"></span>
<select id="view"><option value="-1">every seat's tiles</option><option value="0">seat 0's eyes</option>
<option value="1">seat 1's eyes</option><option value="2">seat 2's eyes</option><option value="3">seat 3's eyes</option>
</select></div>
<div id="info"></div><div id="claims"></div><div id="table"></div><div id="result"></div>"""


def page_html(trace: Trace) -> str:
    """The replay page of ``trace`` as one HTML string (module docstring)."""
    data = {**trace.to_json(), "breakdown": breakdown(trace), "decl_names": {str(k): v for k, v in DECL_NAMES.items()}}
    # "<" escaped: the JSON cannot close its script element, whatever a log's names hold
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>caishen replay: {trace.rules}</title><style>{_STYLE}</style></head><body>\n{_BODY}\n"
            f"<script type=\"application/json\" id=\"trace\">{blob}</script>\n<script>{_SCRIPT}</script>\n"
            "</body></html>\n")


def write_html(trace: Trace, path: str | os.PathLike) -> Path:
    """Write the replay page of ``trace`` to ``path`` atomically (:func:`caishen.sim.safeio.atomic_write`).

    Raises :class:`caishen.sim.safeio.FileError` naming ``path`` if anything but a regular file is there --
    a device (``/dev/null``), a FIFO, a socket, a directory or a symbolic link, never replaced nor written
    through (:func:`caishen.sim.safeio.check_target`) -- or it cannot be written.
    """
    p = safeio.check_target(path, "the replay page")
    safeio.atomic_write(p, page_html(trace))
    return p
