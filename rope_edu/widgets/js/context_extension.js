// Chapter 9: what each context-extension method does to the RoPE frequencies.
// Left: new/old frequency θ′ᵢ/θᵢ of every pair against its wavelength 2π/θᵢ (log axes), with the
// original context L and the new one sL marked. Right: the logit of a fixed q, k (every pair
// (√(2/d), 0), so the logit is a² times the mean of cos(Δθ′ᵢ)) as the distance Δ grows.
//
// The tables come from rope_edu.widgets.context_extension.data(), computed with rope_edu.scaling
// on the sliders' grids; here each method's ratio is one of four rules (RULES in Python):
//   one: 1;  inverse: 1/s;  power: S^eᵢ (S tabulated per s, eᵢ = −2i/(d−2));
//   blend: γᵢ + (1 − γᵢ)/s (γ tabulated per L).

const N_DISTANCES = 640;  // log-spaced integer distances per curve (2 points per pixel of the panel)
const PLAIN_CACHE = new Map();  // the plain-RoPE curve depends on the distance range only

function gridIndex(values, v) {
  let best = 0;
  values.forEach((x, j) => { if (Math.abs(x - v) < Math.abs(values[best] - v)) best = j; });
  return best;
}

const RATIO = {
  one: (m, d, s) => d.theta.map(() => 1),
  inverse: (m, d, s) => d.theta.map(() => 1 / s),
  power: (m, d, s, j) => d.exponent.map((e) => Math.pow(m.scale[j], e)),
  blend: (m, d, s, j, l) => m.ramp[l].map((g) => (1 - g) / s + g),
};

// Everything the figure shows for one state: the counterpart of context_extension.readouts.
function compute(state, data) {
  const { method, factor: s, original: L } = state;
  const m = data.methods[method];
  const j = gridIndex(data.factors, s), l = gridIndex(data.originals, L);
  const ratio = RATIO[m.rule](m, data, s, j, l);
  const theta = data.theta, n = theta.length;
  const inv = theta.map((t, i) => t * ratio[i]);
  const a = m.attention[j], a2 = a * a;
  const newContext = Math.round(s * L);
  const logit = (dist, freqs, scale) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += Math.cos(dist * freqs[i]);
    return (scale * sum) / n;
  };
  const trained = theta.map((t) => L * t);
  const beyond = inv.map((f, i) => trained[i] < 2 * Math.PI && newContext * f > trained[i] * (1 + 1e-9));
  return {
    ratio, inv, beyond, a2, newContext, logit,
    readouts: {
      new_context: newContext,
      moved: ratio.filter((r) => r < 1 - data.moved_rtol).length,
      slowdown_first: 1 / ratio[0],
      slowdown_last: 1 / ratio[n - 1],
      logit_scale: a2,
      beyond: beyond.filter(Boolean).length,
      no_full_turn: trained.filter((t) => t < 2 * Math.PI).length,
      logit_plain_new: logit(newContext, theta, 1),
      logit_new: logit(newContext, inv, a2),
    },
  };
}

function fraction(k) { return k === 0 ? "1" : `1/${Math.pow(2, k)}`; }

// groups of three digits kept together (no-break spaces): a wrapped heading never splits a number
function grouped(v) { return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, "\u00a0"); }

// A vertical line at x with its label at the top (row 0) or just below (row 1).
function marker(p, x, label, color, dash, row = 0) {
  const X = p.sx(x);
  if (X < p.box.x - 0.5 || X > p.box.x + p.box.w + 0.5) return;
  el("line", { x1: X, x2: X, y1: p.box.y, y2: p.box.y + p.box.h, stroke: color, "stroke-width": 1.5, "stroke-dasharray": dash ? "5 3" : null }, p.g);
  text(p.g, X + 3, p.box.y + 13 + 14 * row, label, { fill: color, class: "legend-label" });
}

function draw(fig) {
  const { method, factor: s, original: L } = fig.state;
  const d = fig.data, m = d.methods[method];
  const c = compute(fig.state, d);
  const n = d.theta.length;
  const label = m.label;
  fig.heading(`${label}: s = ${fmt(s, 1)}, L = ${grouped(L)}, new context sL = ${grouped(c.newContext)}`);

  // --- left: which frequencies move ---
  const yLow = Math.pow(2, -11);
  const yticks = [];
  for (let k = 0; k <= 10; k += 1) yticks.push([Math.pow(2, -k), k % 2 === 0 ? fraction(k) : ""]);
  const panelH = fig.layout.panelH || 262;  // a phone's panels are shorter: both fit the screen with the controls
  const left = plot(fig.svg, { x: 66, y: 50, w: 290, h: panelH }, {
    x: [3, 3e6], y: [yLow, 1.6], xlog: true, ylog: true, yticks,
    xticks: [10, 1e2, 1e3, 1e4, 1e5, 1e6].map((t) => [t, tickLabel(t, true)]),
    title: "which frequencies move",
    xlabel: "wavelength 2π/θᵢ (positions, log)", ylabel: panelH < 200 ? "θ′ᵢ / θᵢ (new / old, log)" : "θ′ᵢ / θᵢ (new / old frequency, log)", ylabelOffset: 46,
  });
  for (const [v, name] of [[1, "1 (kept)"], [1 / s, "1/s"]]) {
    if (v === 1 / s && s === 1) continue;
    const Y = left.sy(v);
    el("line", { x1: left.box.x, x2: left.box.x + left.box.w, y1: Y, y2: Y, stroke: COLORS.grey, "stroke-dasharray": "2 3" }, left.g);
    // right end, below the line: no pair has a wavelength there (they stop near 5e4)
    text(left.g, left.box.x + left.box.w - 4, Y + 13, name, { class: "legend-label", fill: COLORS.grey, "text-anchor": "end" });
  }
  // sL's label goes one row lower when the two lines are close (s near 1)
  const sLrow = s < 2 ? 1 : 0;
  marker(left, L, "L", COLORS.orange, false);
  marker(left, c.newContext, "sL", COLORS.accent, true, sLrow);
  const wl = d.theta.map((t) => (2 * Math.PI) / t);
  line(left, wl.map((w, i) => [w, c.ratio[i]]), { stroke: COLORS.q, "stroke-width": 1, opacity: 0.5 });
  wl.forEach((w, i) => {
    const X = left.sx(w), Y = left.sy(c.ratio[i]);
    const moved = c.ratio[i] < 1 - d.moved_rtol;
    el("circle", { cx: X, cy: Y, r: 2.8, fill: moved ? COLORS.q : "#fff", stroke: moved ? COLORS.q : COLORS.grey, "stroke-width": 1.2 }, left.g);
    if (c.beyond[i]) el("circle", { cx: X, cy: Y, r: 5.6, fill: "none", stroke: COLORS.k, "stroke-width": 1.5 }, left.g);
  });
  const lg = el("g", { class: "legend" }, fig.svg);
  const lx = left.box.x + 10, ly = left.box.y + left.box.h - 46;
  el("circle", { cx: lx + 6, cy: ly, r: 2.8, fill: "#fff", stroke: COLORS.grey, "stroke-width": 1.2 }, lg);
  text(lg, lx + 16, ly + 4, "pair unchanged", { class: "legend-label" });
  el("circle", { cx: lx + 6, cy: ly + 16, r: 2.8, fill: COLORS.q, stroke: COLORS.q }, lg);
  text(lg, lx + 16, ly + 20, "pair slowed", { class: "legend-label" });
  el("circle", { cx: lx + 6, cy: ly + 32, r: 5.6, fill: "none", stroke: COLORS.k, "stroke-width": 1.5 }, lg);
  text(lg, lx + 16, ly + 36, "past its trained arc at sL", { class: "legend-label" });

  // --- right: the logit of a fixed q, k over distance ---
  const right = plot(fig.svg, { x: 450, y: 50, w: 290, h: panelH }, {
    x: [1, 3e6], y: [-0.4, 2.0], xlog: true, yticks: [-0.4, 0, 0.4, 0.8, 1.2, 1.6, 2.0],
    xticks: [1, 10, 1e2, 1e3, 1e4, 1e5, 1e6].map((t) => [t, tickLabel(t, true)]),
    title: "logit of a fixed q, k",
    xlabel: "distance Δ = m − n (positions, log)", ylabel: "attention logit", ylabelOffset: 40,
  });
  const zero = right.sy(0);
  el("line", { x1: right.box.x, x2: right.box.x + right.box.w, y1: zero, y2: zero, stroke: COLORS.grey, "stroke-width": 0.8 }, right.g);
  marker(right, L, "L", COLORS.orange, false);
  marker(right, c.newContext, "sL", COLORS.accent, true, sLrow);
  const far = 2 * c.newContext, dist = [];
  for (let i = 0; i < N_DISTANCES; i++) {
    const v = Math.floor(Math.exp((Math.log(far) * i) / (N_DISTANCES - 1)) + 1e-9);
    if (!dist.length || v > dist[dist.length - 1]) dist.push(v);
  }
  if (!PLAIN_CACHE.has(far)) {
    if (PLAIN_CACHE.size > 64) PLAIN_CACHE.clear();
    PLAIN_CACHE.set(far, dist.map((x) => [x, c.logit(x, d.theta, 1)]));
  }
  line(right, PLAIN_CACHE.get(far), { stroke: COLORS.grey, "stroke-width": 1.2 });
  line(right, dist.map((x) => [x, c.logit(x, c.inv, c.a2)]), { stroke: COLORS.k, "stroke-width": 1.4 });
  const lw = 206, lx2 = right.box.x + right.box.w - lw - 4, ly2 = right.box.y + 54;
  el("rect", { x: lx2 - 6, y: ly2 - 12, width: lw + 6, height: 38, fill: "#fff", opacity: 0.9 }, fig.svg);
  legend(fig.svg, lx2, ly2, [
    ["plain RoPE", COLORS.grey],
    [method === "default" ? "plain RoPE (the same)" : c.a2 === 1 ? label : `${label}, logits × a²`, COLORS.k],
  ]);

  fig.note("Config names (rope_type): plain RoPE = default; Position Interpolation = linear; NTK-aware = ntk; dynamic NTK = dynamic, read at ℓ = sL; YaRN = yarn (β 32 and 1); Llama 3.1 = llama3 (low 1, high 4). d = 128, b = 10 000.");

  // --- readouts (their Python counterpart: context_extension.readouts) ---
  const r = c.readouts;
  fig.readout("new_context", "new context sL", r.new_context, 0);
  fig.readout("moved", `pairs slowed (of ${n})`, r.moved, 0);
  fig.readout("slowdown_first", "θ₀/θ′₀ (fastest pair)", r.slowdown_first, 3);
  fig.readout("slowdown_last", `θ${sub(n - 1)}/θ′${sub(n - 1)} (slowest pair)`, r.slowdown_last, 3);
  fig.readout("logit_scale", "logit factor a²", r.logit_scale, 3);
  fig.readout("beyond", "pairs past their trained arc at sL", r.beyond, 0);
  fig.readout("no_full_turn", "pairs turning less than once over L", r.no_full_turn, 0);
  fig.readout("logit_plain_new", "logit at Δ = sL, plain RoPE", r.logit_plain_new, 3);
  fig.readout("logit_new", `logit at Δ = sL, ${fig.data.methods[method].label}`, r.logit_new, 3);
}

function sub(k) { return String(k).split("").map((ch) => "₀₁₂₃₄₅₆₇₈₉"[Number(ch)]).join(""); }

// Wide: the two panels side by side. Narrow (a phone): the same drawing with shorter panels,
// stacked (tiles) under the heading, so that the controls and both panels share one screen.
const FIGURE = figure(draw, { layouts: [
  { width: 756, height: 372 },
  { width: 756, height: 282, panelH: 172, tiles: [[0, 26, 380, 256], [396, 26, 360, 256]] },
] });
export default FIGURE;
export { compute };
