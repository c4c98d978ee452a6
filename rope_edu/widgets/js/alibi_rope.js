// Chapter 13: ALiBi's bias −m_h·δ (one straight line per head) next to RoPE's mean logit change
// 2ρ Σ_i (cos(δθ_i) − 1) / √d for random queries and keys with coordinate correlation ρ. Both are
// changes of the attention logit relative to distance 0; the x-axis runs to twice the distance slider.

function compute({ heads, distance, rho, dim, base }, { slopes, theta }) {
  const m = slopes[String(heads)];
  const th = theta[`${dim}|${base}`];
  const d = Number(dim);
  const ropeAt = (delta) => {
    let s = 0;
    for (const t of th) s += Math.cos(delta * t) - 1;
    return (2 * rho * s) / Math.sqrt(d);
  };
  return {
    m, ropeAt,
    slope_first: m[0],
    slope_last: m[m.length - 1],
    alibi_first: -m[0] * distance,
    alibi_last: -m[m.length - 1] * distance,
    rope: ropeAt(distance),
  };
}

function draw(fig) {
  const { distance, rho, dim } = fig.state;
  const r = compute(fig.state, fig.data);
  const xmax = Math.max(16, 2 * distance);
  const ropeFloor = -2 * Math.sqrt(Number(dim)) * Math.max(rho, 0.05);  // RoPE's change never goes below this
  const ymin = Math.min(ropeFloor * 1.1, -r.m[r.m.length - 1] * xmax * 1.05, -12);
  const p = plot(fig.svg, fig.layout.box, {
    x: [0, xmax], y: [ymin, 0.05 * -ymin],
    xlabel: "distance δ = i − j (tokens)", ylabel: "change of the logit from δ = 0",
  });
  const xs = [];
  const n = 200;
  for (let i = 0; i <= n; i++) xs.push((xmax * i) / n);
  r.m.forEach((mh, h) => {
    line(p, [[0, 0], [xmax, -mh * xmax]], { stroke: COLORS.k, opacity: h === 0 || h === r.m.length - 1 ? 1 : 0.35,
      "stroke-width": h === 0 || h === r.m.length - 1 ? 2.5 : 1.2 });
  });
  const ropePts = [];
  for (let i = 0; i <= 4 * n; i++) { const x = (xmax * i) / (4 * n); ropePts.push([x, r.ropeAt(x)]); }
  line(p, ropePts, { stroke: COLORS.q, "stroke-width": 2.5 });
  el("line", { x1: p.sx(distance), x2: p.sx(distance), y1: p.box.y, y2: p.box.y + p.box.h, stroke: COLORS.grey,
    "stroke-dasharray": "4 4" }, p.g);
  el("circle", { cx: p.sx(distance), cy: p.sy(r.rope), r: 5, fill: COLORS.q }, p.g);
  el("circle", { cx: p.sx(distance), cy: p.sy(r.alibi_last), r: 5, fill: COLORS.k }, p.g);
  legend(fig.svg, 520, 40, [
    [`ALiBi, ${r.m.length} heads (−m_h δ)`, COLORS.k],
    [`RoPE mean, d = ${dim}, ρ = ${fmt(rho, 2)}`, COLORS.q],
    ["distance δ on the slider", COLORS.grey, true],
  ]);
  text(fig.svg, 520, 110, "ALiBi: a penalty growing", { class: "legend-label" });
  text(fig.svg, 520, 126, "without bound, the same at", { class: "legend-label" });
  text(fig.svg, 520, 142, "every length.", { class: "legend-label" });
  text(fig.svg, 520, 166, "RoPE: no bias; the mean logit", { class: "legend-label" });
  text(fig.svg, 520, 182, "of correlated q, k drifts down", { class: "legend-label" });
  text(fig.svg, 520, 198, "and oscillates; any single", { class: "legend-label" });
  text(fig.svg, 520, 214, "q, k can do anything.", { class: "legend-label" });

  fig.readout("slope_first", "steepest slope m₁", r.slope_first, 4);
  fig.readout("slope_last", "shallowest slope m_H", r.slope_last, 5);
  fig.readout("alibi_first", "ALiBi bias at δ, head 1", r.alibi_first, 3);
  fig.readout("alibi_last", "ALiBi bias at δ, head H", r.alibi_last, 3);
  fig.readout("rope", "RoPE mean change at δ", r.rope, 3);
}

export { compute };
// Wide: the notes right of the plot. Narrow: a narrower plot, the notes under it (tiles).
export default figure(draw, { layouts: [
  { width: 720, height: 390, box: { x: 70, y: 20, w: 430, h: 320 } },
  { width: 720, height: 390, box: { x: 70, y: 20, w: 276, h: 280 }, tiles: [[0, 6, 360, 344], [510, 26, 210, 196]] },
] });
