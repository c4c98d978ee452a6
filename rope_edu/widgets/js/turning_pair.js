// The landing page: two tokens' vectors, each turned counter-clockwise by its position times θ.
// Moving both tokens (p) turns both arrows by the same angle: the angle between them, and so the
// attention score, stay the same; only the distance between the tokens (gap) changes them.

function turn([a, b], angle) {
  const c = Math.cos(angle), s = Math.sin(angle);
  return [a * c - b * s, a * s + b * c];
}

function toDegrees(rad) {  // into (−180°, 180°]
  const d = (rad * 180) / Math.PI;
  return 180 - ((((180 - d) % 360) + 360) % 360);
}

function draw(fig) {
  const { p, gap } = fig.state;
  const { q, k, theta } = fig.data;
  const { box, side } = fig.layout;
  const m = p + gap, n = p;
  const qm = turn(q, m * theta), kn = turn(k, n * theta);
  const between = toDegrees(Math.atan2(qm[1], qm[0]) - Math.atan2(kn[1], kn[0]));
  const score = qm[0] * kn[0] + qm[1] * kn[1];
  fig.heading("Each arrow turns by its position; the angle between them depends on the distance only", 16);
  const lim = 1.3;
  const pl = plot(fig.svg, box, { x: [-lim, lim], y: [-lim, lim], equal: true, xticks: [-1, 0, 1], yticks: [-1, 0, 1] });
  const O = [pl.sx(0), pl.sy(0)], unit = pl.sx(1) - pl.sx(0);
  el("circle", { cx: O[0], cy: O[1], r: Math.hypot(...q) * unit, fill: "none", stroke: COLORS.grey, "stroke-dasharray": "2 4", opacity: 0.6 }, pl.g);
  // the angle from the key's arrow to the query's
  const r = 0.5 * unit, a0 = Math.atan2(kn[1], kn[0]), span = (between * Math.PI) / 180;
  const arc = [];
  for (let i = 0; i <= 40; i++) { const a = a0 + (span * i) / 40; arc.push(`${i ? "L" : "M"}${O[0] + r * Math.cos(a)},${O[1] - r * Math.sin(a)}`); }
  el("path", { d: arc.join(""), fill: "none", stroke: COLORS.accent, "stroke-width": 2.5 }, pl.g);
  arrow(pl.g, ...O, pl.sx(qm[0]), pl.sy(qm[1]), COLORS.q, { "stroke-width": 3.5 });
  arrow(pl.g, ...O, pl.sx(kn[0]), pl.sy(kn[1]), COLORS.k, { "stroke-width": 3.5 });
  text(pl.g, pl.sx(1.16 * qm[0]), pl.sy(1.16 * qm[1]) + 4, "q", { fill: COLORS.q, "text-anchor": "middle", class: "axis-label" });
  text(pl.g, pl.sx(1.16 * kn[0]), pl.sy(1.16 * kn[1]) + 4, "k", { fill: COLORS.k, "text-anchor": "middle", class: "axis-label" });
  // the tokens on a line of text: the key at n, the query at m
  const [tx, ty, tw] = side;
  const cells = 37, cw = tw / cells;
  for (let i = 0; i < cells; i++) {
    const on = i === m ? COLORS.q : i === n ? COLORS.k : null;
    el("rect", { x: tx + i * cw + 0.5, y: ty, width: cw - 1, height: 14, fill: on || "#eee", stroke: "none" }, fig.svg);
  }
  text(fig.svg, tx, ty + 32, `key at position ${n}, query at ${m}`, { class: "legend-label" });
  if (fig.layout.legend) {
    legend(fig.svg, tx, ty + 58, [[`q turned by ${m}θ`, COLORS.q], [`k turned by ${n}θ`, COLORS.k],
      ["angle between them", COLORS.accent]]);
  }

  fig.readout("m", "query at", m, 0);
  fig.readout("n", "key at", n, 0);
  // each arrow's turn as the direction it points: modulo a full turn, in [0°, 360°)
  fig.readout("turn_q", "turn of q, mod 360°", ((m * theta * 180) / Math.PI) % 360, 2, "°");
  fig.readout("turn_k", "turn of k, mod 360°", ((n * theta * 180) / Math.PI) % 360, 2, "°");
  fig.readout("angle", "angle between them", between, 2, "°");
  fig.readout("score", "score q·k", score, 3);
  // why "angle between" is not the difference of the two turns: the arrows start apart
  const start = (v) => (Math.atan2(v[1], v[0]) * 180) / Math.PI;
  fig.note(`q and k start at different angles: before any turn, q points at ${fmt(start(q), 2)}° and k at ` +
    `${fmt(start(k), 2)}°, so the angle between them is the turn of q, minus the turn of k, minus ` +
    `${fmt(start(k) - start(q), 2)}° (modulo 360°; each number is rounded on its own, so the sum may be off by 0.01°).`);
}

// Wide: the plane left, the tokens and legend right. Narrow: the tokens above the plane, no legend
// (the readouts say what each arrow turned by).
export default figure(draw, { layouts: [
  { width: 680, height: 290, box: { x: 40, y: 30, w: 236, h: 236 }, side: [320, 90, 340], legend: true },
  { width: 360, height: 310, headingAbove: true, box: { x: 62, y: 50, w: 236, h: 236 }, side: [10, 4, 340] },
] });
