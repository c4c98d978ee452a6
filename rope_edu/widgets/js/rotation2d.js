// Chapter 3: RoPE in two dimensions. q sits at position m + s, k at n + s; each is turned
// counter-clockwise by its position times θ (multiplication by e^{i·pos·θ}); the dot product of the
// turned vectors depends on m − n only, so the shift s never changes it.

function rotate([a, b], angle) {
  const c = Math.cos(angle), s = Math.sin(angle);
  return [a * c - b * s, a * s + b * c];
}

function wrap(angle) {  // into (−π, π]
  return Math.PI - ((((Math.PI - angle) % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI));
}

function draw(fig) {
  const { m, n, s, theta } = fig.state;
  const { q, k } = fig.data;
  const mt = m + s, nt = n + s;
  const qm = rotate(q, mt * theta), kn = rotate(k, nt * theta);
  const dot = qm[0] * kn[0] + qm[1] * kn[1];
  const g = (() => { const kr = rotate(k, (nt - mt) * theta); return q[0] * kr[0] + q[1] * kr[1]; })();
  const between = wrap(Math.atan2(qm[1], qm[0]) - Math.atan2(kn[1], kn[0]));
  const nq = Math.hypot(...q), nk = Math.hypot(...k);
  const lim = 1.35 * Math.max(nq, nk);
  const p = plot(fig.svg, fig.layout.box, {
    x: [-lim, lim], y: [-lim, lim], equal: true, xticks: [-1, 0, 1], yticks: [-1, 0, 1],
    xlabel: "coordinate 0 (real part)", ylabel: "coordinate 1 (imaginary part)",
  });
  const O = [p.sx(0), p.sy(0)], unit = p.sx(1) - p.sx(0);
  el("circle", { cx: O[0], cy: O[1], r: nq * unit, fill: "none", stroke: COLORS.q, "stroke-dasharray": "2 4", opacity: 0.6 }, p.g);
  el("circle", { cx: O[0], cy: O[1], r: nk * unit, fill: "none", stroke: COLORS.k, "stroke-dasharray": "2 4", opacity: 0.6 }, p.g);
  arrow(p.g, ...O, p.sx(q[0]), p.sy(q[1]), COLORS.q, { opacity: 0.3 });
  arrow(p.g, ...O, p.sx(k[0]), p.sy(k[1]), COLORS.k, { opacity: 0.3 });
  text(p.g, p.sx(1.12 * q[0]), p.sy(1.12 * q[1]) + 4, "q", { fill: COLORS.q, opacity: 0.7, "text-anchor": "middle" });
  text(p.g, p.sx(1.12 * k[0]), p.sy(1.12 * k[1]) + 4, "k", { fill: COLORS.k, opacity: 0.7, "text-anchor": "middle" });
  // The angle α from k_n to q_m: besides the lengths, the only thing the dot product sees.
  const r = 0.35 * Math.min(nq, nk) * unit, a0 = Math.atan2(kn[1], kn[0]);
  const arc = [];
  for (let i = 0; i <= 40; i++) { const a = a0 + (between * i) / 40; arc.push(`${i ? "L" : "M"}${O[0] + r * Math.cos(a)},${O[1] - r * Math.sin(a)}`); }
  el("path", { d: arc.join(""), fill: "none", stroke: COLORS.accent, "stroke-width": 2.5 }, p.g);
  const mid = a0 + between / 2;
  text(p.g, O[0] + 1.5 * r * Math.cos(mid), O[1] - 1.5 * r * Math.sin(mid) + 5, "α", { fill: COLORS.accent, "text-anchor": "middle" });
  arrow(p.g, ...O, p.sx(qm[0]), p.sy(qm[1]), COLORS.q, { "stroke-width": 3.5 });
  arrow(p.g, ...O, p.sx(kn[0]), p.sy(kn[1]), COLORS.k, { "stroke-width": 3.5 });
  // The key: beside the plane when there is room, two short columns under it on a phone.
  const key = [[`q turned, at ${mt}`, COLORS.q], [`k turned, at ${nt}`, COLORS.k],
    ["α: angle from k to q", COLORS.accent], ["pale: before turning", COLORS.grey]];
  const at = fig.layout.key;
  if (at.columns) {
    legend(fig.svg, at.x, at.y, key.slice(0, 2));
    legend(fig.svg, at.x + at.columns, at.y, key.slice(2));
  } else {
    legend(fig.svg, at.x, at.y, key);
    text(fig.svg, at.x, 130, "Shift s turns both arrows", { class: "legend-label" });
    text(fig.svg, at.x, 146, "by sθ: α and the dot", { class: "legend-label" });
    text(fig.svg, at.x, 162, "product stay the same.", { class: "legend-label" });
  }

  // In words: the reader reads these while dragging (above the plane on a phone, where the key
  // names both positions and the arrows show both turns, so two lines say what changes).
  if (!fig.layout.compact) {
    fig.readout("m_total", "position of q", mt, 0);
    fig.readout("n_total", "position of k", nt, 0);
    fig.readout("angle_q", "turn of q", mt * theta, 2, "rad");
    fig.readout("angle_k", "turn of k", nt * theta, 2, "rad");
  }
  fig.readout("relative", "m − n", mt - nt, 0);
  fig.readout("angle_between", "angle α", between, 3, "rad");
  fig.readout("dot", "logit", dot, 4);
  fig.readout("g", "logit from m − n alone", g, 4);
}

// Wide: the key right of the plane. Narrow (a phone): a smaller plane with the key in two columns
// under it, and two lines of readouts (m − n, α and both logits) above it, beside the controls
// that change them, so that controls, numbers and drawing share the page's first screen.
export default figure(draw, { layouts: [
  { width: 680, height: 396, box: { x: 60, y: 12, w: 340, h: 340 }, key: { x: 440, y: 40 } },
  { width: 360, height: 316, box: { x: 70, y: 6, w: 240, h: 240 }, key: { x: 8, y: 290, columns: 178 },
    readoutsAbove: true, compact: true },
] });
