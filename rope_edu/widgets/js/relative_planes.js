// Chapter 4: RoPE in d = 8 dimensions is four plane rotations. The query q sits at position m + s,
// the key k at n + s. Pair i (coordinates 2i, 2i+1) of each is turned counter-clockwise by its
// position times θ_i, every plane at its own speed. The score ⟨R_{m+s} q, R_{n+s} k⟩ is the sum of
// one dot product per plane; each depends on the angle α_i between the two turned pairs, which the
// shift s never changes (both arrows turn by sθ_i): R_mᵀ R_n = R_{n−m}, block by block.

const SUB = "₀₁₂₃₄₅₆₇₈₉";
const sub = (i) => String(i).split("").map((c) => SUB[+c]).join("");

function rotate(a, b, angle) {
  const c = Math.cos(angle), s = Math.sin(angle);
  return [a * c - b * s, a * s + b * c];
}

// What the figure shows for a state, from the figure's data (the frequencies θ_i and q, k).
function compute({ m, n, s }, { theta, q, k }) {
  const mt = m + s, nt = n + s, planes = [];
  let score = 0, g = 0;
  theta.forEach((t, i) => {
    const qi = [q[2 * i], q[2 * i + 1]], ki = [k[2 * i], k[2 * i + 1]];
    const qm = rotate(...qi, mt * t), kn = rotate(...ki, nt * t);
    const c = qm[0] * kn[0] + qm[1] * kn[1];
    const kr = rotate(...ki, (n - m) * t);  // block i of R_{n−m} applied to k_i
    score += c;
    g += qi[0] * kr[0] + qi[1] * kr[1];
    planes.push({ qi, ki, qm, kn, c });
  });
  return { mt, nt, planes, score, g };
}

function draw(fig) {
  const { m, n, s } = fig.state;
  const { theta, bound } = fig.data;
  const svg = fig.svg, { mt, nt, planes, score, g } = compute(fig.state, fig.data);
  const R = 58, cy = 134;
  const norms = planes.flatMap(({ qi, ki }) => [Math.hypot(...qi), Math.hypot(...ki)]);
  const unit = R / Math.max(...norms);  // one scale for every plane: lengths compare across planes
  fig.heading(`q at position m + s = ${fmt(mt, 0)}, k at n + s = ${fmt(nt, 0)}: pair i turns by its position × θᵢ`);

  planes.forEach(({ qi, ki, qm, kn, c }, i) => {
    const cx = 92 + 172 * i;
    el("line", { x1: cx - R - 8, x2: cx + R + 8, y1: cy, y2: cy, class: "grid" }, svg);
    el("line", { x1: cx, x2: cx, y1: cy - R - 8, y2: cy + R + 8, class: "grid" }, svg);
    text(svg, cx + R + 9, cy + 4, `x${sub(2 * i)}`, { class: "tick-label" });
    text(svg, cx + 4, cy - R - 9, `x${sub(2 * i + 1)}`, { class: "tick-label" });
    text(svg, cx, 40, `plane ${i}`, { class: "legend-label", "text-anchor": "middle", "font-weight": 600 });
    text(svg, cx, 55, `θ${sub(i)} = ${fmt(theta[i], 3)} rad/position`, { class: "tick-label", "text-anchor": "middle" });
    const nq = Math.hypot(...qi), nk = Math.hypot(...ki);
    el("circle", { cx, cy, r: nq * unit, fill: "none", stroke: COLORS.q, "stroke-dasharray": "2 4", opacity: 0.6 }, svg);
    el("circle", { cx, cy, r: nk * unit, fill: "none", stroke: COLORS.k, "stroke-dasharray": "2 4", opacity: 0.6 }, svg);
    arrow(svg, cx, cy, cx + unit * qi[0], cy - unit * qi[1], COLORS.q, { opacity: 0.25 });
    arrow(svg, cx, cy, cx + unit * ki[0], cy - unit * ki[1], COLORS.k, { opacity: 0.25 });
    // α_i, the angle from the turned key to the turned query: all the plane's contribution sees.
    const a0 = Math.atan2(kn[1], kn[0]);
    let between = Math.atan2(qm[1], qm[0]) - a0;
    between = Math.PI - ((((Math.PI - between) % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI));
    const r = 0.32 * Math.min(nq, nk) * unit, arc = [];
    for (let j = 0; j <= 32; j++) {
      const a = a0 + (between * j) / 32;
      arc.push(`${j ? "L" : "M"}${(cx + r * Math.cos(a)).toFixed(2)},${(cy - r * Math.sin(a)).toFixed(2)}`);
    }
    el("path", { d: arc.join(""), fill: "none", stroke: COLORS.accent, "stroke-width": 2.5 }, svg);
    arrow(svg, cx, cy, cx + unit * qm[0], cy - unit * qm[1], COLORS.q, { "stroke-width": 3 });
    arrow(svg, cx, cy, cx + unit * kn[0], cy - unit * kn[1], COLORS.k, { "stroke-width": 3 });
    const mid = a0 + between / 2;  // the label on top of the arrows, with a white halo
    text(svg, cx + 1.6 * r * Math.cos(mid), cy - 1.6 * r * Math.sin(mid) + 4, `α${sub(i)}`, {
      fill: COLORS.accent, "text-anchor": "middle", class: "legend-label",
      stroke: "#fff", "stroke-width": 3, "paint-order": "stroke",
    });
    text(svg, cx, cy + R + 26, `contribution c${sub(i)} = ${fmt(c, 3)}`, { class: "legend-label", "text-anchor": "middle" });
  });

  // The contributions added up, bar after bar, to the score; the dashed line is qᵀR_{n−m}k.
  const lim = 1.08 * bound;
  const p = plot(svg, fig.layout.bars, {
    x: [-0.6, 4.6], y: [-lim, lim], nticks: 6,
    xticks: [[0, "c₀"], [1, "c₁"], [2, "c₂"], [3, "c₃"], [4, "score"]],
    ylabel: "share of the score", ylabelOffset: 40,
  });
  el("line", { x1: p.sx(-0.6), x2: p.sx(4.6), y1: p.sy(0), y2: p.sy(0), stroke: COLORS.grey, "stroke-width": 1 }, p.g);
  const bar = (x, lo, hi, color) => el("rect", {
    x: p.sx(x - 0.3), width: p.sx(x + 0.3) - p.sx(x - 0.3), y: p.sy(Math.max(lo, hi)),
    height: Math.max(1, Math.abs(p.sy(lo) - p.sy(hi))), fill: color, stroke: "#333", "stroke-width": 0.6,
  }, p.g);
  let run = 0;
  planes.forEach(({ c }, i) => {
    bar(i, run, run + c, c >= 0 ? COLORS.sky : COLORS.orange);
    el("line", { x1: p.sx(i + 0.3), x2: p.sx(i + 0.7), y1: p.sy(run + c), y2: p.sy(run + c), stroke: "#333", "stroke-dasharray": "2 2" }, p.g);
    run += c;
  });
  bar(4, 0, score, COLORS.grey);
  line(p, [[-0.6, g], [4.6, g]], { stroke: COLORS.black, "stroke-dasharray": "6 4", "stroke-width": 1.5 });

  const lx = 466;
  legend(svg, lx, 260, [
    ["q, pair i, at m + s", COLORS.q], ["k, pair i, at n + s", COLORS.k], ["αᵢ: angle from k to q", COLORS.accent],
    ["qᵀR₍ₙ₋ₘ₎k (from m − n alone)", COLORS.black, true],
  ]);
  el("rect", { x: lx + 2, y: 319, width: 14, height: 10, fill: COLORS.sky, stroke: "#333", "stroke-width": 0.6 }, svg);
  text(svg, lx + 24, 328, "cᵢ > 0", { class: "legend-label" });
  el("rect", { x: lx + 82, y: 319, width: 14, height: 10, fill: COLORS.orange, stroke: "#333", "stroke-width": 0.6 }, svg);
  text(svg, lx + 104, 328, "cᵢ < 0", { class: "legend-label" });
  [
    "Faded arrows: q and k at position 0.",
    "Bars: c₀ … c₃ stacked; grey: their sum.",
    "The shift s turns both arrows of a plane",
    "by sθᵢ: no αᵢ, no bar, no score changes.",
    "m or n alone changes αᵢ by θᵢ a step:",
    "fast planes swing, slow ones creep.",
  ].forEach((str, j) => text(svg, lx, 354 + 15 * j, str, { class: "legend-label" }));

  fig.readout("m_total", "query position m+s", mt, 0);
  fig.readout("n_total", "key position n+s", nt, 0);
  fig.readout("relative", "m − n", m - n, 0);
  planes.forEach(({ c }, i) => fig.readout(`c_${i}`, `c${sub(i)}`, c, 3));
  fig.readout("score", "score ⟨R₍ₘ₊ₛ₎q, R₍ₙ₊ₛ₎k⟩ = Σ cᵢ", score, 4);
  fig.readout("g", "qᵀR₍ₙ₋ₘ₎k", g, 4);
}

export { compute };
// Wide: four planes in a row, the bars and the legend under them. Narrow: the same drawing in
// tiles, two planes a row, a narrower bar chart, then the legend; the heading above.
export default figure(draw, { layouts: [
  { width: 720, height: 450, bars: { x: 66, y: 250, w: 380, h: 166 } },
  { width: 720, height: 450, bars: { x: 66, y: 250, w: 276, h: 166 },
    tiles: [[0, 28, 350, 200], [350, 28, 350, 200], [0, 236, 356, 204], [458, 250, 280, 190]] },
] });
