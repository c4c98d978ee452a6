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
  legend(fig.svg, 470, 40, [
    [`R((m+s)θ) q, at ${mt}`, COLORS.q], [`R((n+s)θ) k, at ${nt}`, COLORS.k], ["α = angle from k to q", COLORS.accent],
    ["q, k before rotation", COLORS.grey],
  ]);
  text(fig.svg, 470, 130, "Shift s turns both arrows", { class: "legend-label" });
  text(fig.svg, 470, 146, "by sθ: α and the dot", { class: "legend-label" });
  text(fig.svg, 470, 162, "product stay the same.", { class: "legend-label" });

  fig.readout("m_total", "query position m+s", mt, 0);
  fig.readout("n_total", "key position n+s", nt, 0);
  fig.readout("angle_q", "(m+s)θ", mt * theta, 2, "rad");
  fig.readout("angle_k", "(n+s)θ", nt * theta, 2, "rad");
  fig.readout("relative", "m − n", mt - nt, 0);
  fig.readout("angle_between", "α", between, 3, "rad");
  fig.readout("dot", "⟨R((m+s)θ)q, R((n+s)θ)k⟩", dot, 4);
  fig.readout("g", "qᵀR((n−m)θ)k", g, 4);
}

// Wide: the legend right of the plane. Narrow: a smaller plane, the legend under it (tiles), and
// the readouts above the plane, beside the controls that change them.
export default figure(draw, { layouts: [
  { width: 680, height: 440, box: { x: 60, y: 20, w: 380, h: 380 } },
  { width: 680, height: 440, box: { x: 60, y: 20, w: 284, h: 284 }, tiles: [[0, 6, 356, 350], [462, 26, 218, 150]],
    readoutsAbove: true },
] });
