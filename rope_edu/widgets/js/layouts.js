// Chapter 6: which coordinates a RoPE implementation pairs (the rotation's layout) and which
// frequency each coordinate's cos/sin table entry holds (the table's layout). Top: x and x turned
// at position m as bars, one arc per rotated pair; under each coordinate the θ its table entry
// holds. When both ends of every arc read the same θ the map is a rotation; otherwise (the mix-up)
// it is not. Below: the norm ratio and the score at a fixed distance as the position moves; both are
// flat only when the layouts match. Every number is precomputed by rope_edu (data()); the spreads
// print rounding noise below d.zero as 0, as readouts() does in Python. Pair i is drawn in
// COLOR_CYCLE[i], the book's cycle.

function draw(fig) {
  const { m, rotation, table } = fig.state;
  const d = fig.data;
  const c = d.combos[`${rotation}/${table}`];
  const dim = d.x.length, P = d.positions, last = P[P.length - 1];
  const idx = P.indexOf(m);
  const [a, b] = c.pairs;
  const pairOf = new Array(dim);
  a.forEach((j, i) => { pairOf[j] = i; pairOf[b[i]] = i; });
  const svg = fig.svg;

  // --- top: the coordinates, the pairs, the table's frequencies -------------------------------
  const L = fig.layout;
  const verdict = c.matched ? "The tables match: both ends of every arc read the same θ, so this is a rotation."
    : "MIX-UP: the ends of a dashed arc read different θ, so this is not a rotation.";
  fig.heading(`rotation ${d.rotation_names[rotation]}; cos/sin table ${d.table_names[table]}`, 16, { class: "legend-label", x: 370 });
  fig.heading(verdict, 35, { fill: c.matched ? COLORS.q : COLORS.k, x: 370 });
  // a plot's title: one line over it, or (narrow) wrapped onto lines ending just over it
  const titled = (box, title) => {
    if (!L.titleChars) return title;
    const lines = wrapWords(tr(title), L.titleChars);  // translated first: a wrapped line matches no key
    lines.forEach((s, i) => text(svg, box.x + box.w / 2, box.y - 8 - 15 * (lines.length - 1 - i), s, { class: "plot-title", "text-anchor": "middle" }));
    return undefined;
  };
  const top = plot(svg, L.top, {
    x: [-0.6, dim - 0.4], y: [-1.5, 2.7], grid: true,
    xticks: [...Array(dim).keys()].map((j) => [j, `x${j}`]), yticks: [-1, 0, 1, 2],
    ylabel: "coordinate value",
  });
  const unit = top.sx(1) - top.sx(0);
  for (let j = 0; j < dim; j++) {
    const x0 = d.x[j], xr = c.x_rot[idx][j];
    el("rect", { x: top.sx(j - 0.38), y: top.sy(Math.max(x0, 0)), width: 0.76 * unit, height: Math.abs(top.sy(x0) - top.sy(0)),
      fill: "none", stroke: COLORS.grey, "stroke-dasharray": "4 3", "stroke-width": 1.2 }, top.g);
    el("rect", { x: top.sx(j - 0.24), y: top.sy(Math.max(xr, 0)), width: 0.48 * unit, height: Math.abs(top.sy(xr) - top.sy(0)),
      fill: COLOR_CYCLE[pairOf[j]] }, top.g);
  }
  el("line", { x1: top.box.x, x2: top.box.x + top.box.w, y1: top.sy(0), y2: top.sy(0), stroke: "#444", "stroke-width": 0.8 }, top.g);
  const yArc = top.sy(1.45);
  a.forEach((ja, i) => {
    const jb = b[i], same = c.freq_index[ja] === c.freq_index[jb];
    const xa = top.sx(ja), xb = top.sx(jb), rx = (xb - xa) / 2, ry = 12 + 4 * (jb - ja) + (jb - ja > 1 ? 8 * i : 0);  // stagger arcs that cross
    el("path", { d: `M${xa},${yArc}A${rx},${ry} 0 0 1 ${xb},${yArc}`, fill: "none", stroke: COLOR_CYCLE[i], "stroke-width": 2,
      "stroke-dasharray": same ? null : "5 4" }, top.g);
    if (!same) text(top.g, (xa + xb) / 2, yArc - ry + 5, "✗", { "text-anchor": "middle", fill: COLOR_CYCLE[i], class: "axis-label" });
  });
  for (let j = 0; j < dim; j++) {  // the table's frequency under each coordinate
    const f = c.freq_index[j];
    text(svg, top.sx(j), top.box.y + top.box.h + 30, `θ${f}`, { class: "axis-label", "text-anchor": "middle", fill: COLOR_CYCLE[f] });
  }
  text(svg, top.box.x - 10, top.box.y + top.box.h + 30, "table:", { class: "tick-label", "text-anchor": "end" });
  el("rect", { x: 420, y: 48, width: 14, height: 10, fill: "none", stroke: COLORS.grey, "stroke-dasharray": "3 2" }, svg);
  text(svg, 439, 57, "x", { class: "legend-label" });
  el("rect", { x: 465, y: 48, width: 14, height: 10, fill: COLOR_CYCLE[0] }, svg);
  text(svg, 484, 57, "x turned at m (colour: its pair)", { class: "legend-label" });
  text(svg, 80, 57, "arcs: the pairs the rotation turns together", { class: "legend-label" });

  // --- middle: norm ratio; bottom: score at distance d.distance -------------------------------
  const xs = { x: [0, last], xticks: [0, 5, 10, 15, 20, 25, 30, 35, 40] };
  const mid = plot(svg, L.mid, {
    ...xs, y: [0.5, 1.5], yticks: [0.5, 1, 1.5], ylabel: "norm ratio",
    title: titled(L.mid, "‖f(x, p)‖ / ‖x‖: 1 at every position for a rotation"),
  });
  line(mid, [[0, 1], [last, 1]], { stroke: COLORS.grey, "stroke-dasharray": "2 3", "stroke-width": 1.2 });
  el("line", { x1: mid.sx(m), x2: mid.sx(m), y1: mid.box.y, y2: mid.box.y + mid.box.h, stroke: COLORS.accent, "stroke-width": 1.5 }, mid.g);
  line(mid, P.map((p, i) => [p, c.norm_curve[i]]), { stroke: COLORS.q });
  el("circle", { cx: mid.sx(m), cy: mid.sy(c.norm_curve[idx]), r: 4, fill: COLORS.accent }, svg);

  const ref = c.score_ref;
  const bot = plot(svg, L.bot, {
    ...xs, y: [ref - 1.5, ref + 1.5], nticks: 3, ylabel: "score", xlabel: "position p (tokens)",
    title: titled(L.bot, `score ⟨f(x, p+${d.distance}), f(k, p)⟩, query ${d.distance} positions after the key: constant for RoPE`),
  });
  line(bot, [[0, ref], [last, ref]], { stroke: COLORS.grey, "stroke-dasharray": "2 3", "stroke-width": 1.5 });
  el("line", { x1: bot.sx(m), x2: bot.sx(m), y1: bot.box.y, y2: bot.box.y + bot.box.h, stroke: COLORS.accent, "stroke-width": 1.5 }, bot.g);
  line(bot, P.map((p, i) => [p, c.score_curve[i]]), { stroke: COLORS.k });
  el("circle", { cx: bot.sx(m), cy: bot.sy(c.score_curve[idx]), r: 4, fill: COLORS.accent }, svg);
  legend(svg, 90, L.legendY, [["this implementation", COLORS.k]]);
  legend(svg, 260, L.legendY, [["correct RoPE (same distance)", COLORS.grey, true]]);
  legend(svg, 480, L.legendY, [["p = m", COLORS.accent]]);

  fig.readout("norm_ratio", "‖f(x, m)‖ / ‖x‖", c.norm_curve[idx], 3);
  fig.readout("norm_error", `largest |ratio − 1|, p = 0..${last}`, c.norm_error, 3, "", { zero: d.zero });
  fig.readout("score", `score at p = m`, c.score_curve[idx], 3);
  fig.readout("score_ref", "correct RoPE score", ref, 3);
  fig.readout("score_spread", `score max − min, p = 0..${last}`, c.score_spread, 3, "", { zero: d.zero });
}

// Wide: three plots as wide as the column. Narrow: narrower plots with their titles wrapped, the
// keys and legends in tiles of their own, the two heading lines above the drawing.
export default figure(draw, { layouts: [
  { width: 680, height: 652, top: { x: 80, y: 66, w: 580, h: 196 }, mid: { x: 80, y: 336, w: 580, h: 100 },
    bot: { x: 80, y: 484, w: 580, h: 100 }, legendY: 640 },
  { width: 680, height: 690, top: { x: 60, y: 66, w: 286, h: 196 }, mid: { x: 60, y: 350, w: 286, h: 100 },
    bot: { x: 60, y: 528, w: 286, h: 100 }, legendY: 676, titleChars: 42,
    tiles: [[70, 44, 290, 18], [412, 44, 268, 18], [0, 62, 360, 238], [0, 304, 360, 166], [0, 474, 360, 190],
      [84, 666, 170, 20], [254, 666, 220, 20], [474, 666, 80, 20]] },
] });
