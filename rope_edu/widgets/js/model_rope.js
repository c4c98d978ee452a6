// Chapter 10: where position lives in the heads of two released models. Each strip is one query
// head, one cell per coordinate, coloured by the wavelength of the rotated pair the coordinate
// belongs to (grey: it passes through without position); a bar under a cell marks a pair that does
// not complete one turn within the context of 2ᵏ tokens. Below: the wavelengths of both models' pairs.
// Every wavelength is precomputed by rope_edu.models.rope_spec (data()).

// Linear interpolation in a list of hex colour stops; t in [0, 1].
function colormap(stops, t) {
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
  const rgb = (h) => [1, 3, 5].map((j) => parseInt(h.slice(j, j + 2), 16));
  const a = rgb(stops[i]), b = rgb(stops[i + 1]);
  return `rgb(${a.map((v, j) => Math.round(v + f * (b[j] - v))).join(",")})`;
}

// The wavelengths the model's code uses for a sequence of `context` tokens: LongRoPE models
// (Phi-3) switch to their long factors past their original length (model_rope.wavelengths_at).
function wavelengthsAt(m, context) {
  return m.switch !== null && m.switch !== undefined && context > m.switch ? m.wavelengths_long : m.wavelengths;
}

// The readouts, from the controls and data() alone (the tests run it under Node).
function compute(state, data) {
  const context = Math.pow(2, state.k);
  const out = { context };
  for (const [suffix, name] of [["a", state.model_a], ["b", state.model_b]]) {
    const m = data.models[name], wl = wavelengthsAt(m, context);
    out[`rot_${suffix}`] = m.rotary_dim;
    out[`frac_${suffix}`] = m.rotary_dim / m.head_dim;
    out[`longest_${suffix}`] = Math.max(...wl);
    out[`slow_${suffix}`] = wl.filter((w) => w > context).length;
  }
  return out;
}

// One strip at x0 (width w, from fig.layout.strip), its caption from baseline `top` (wrapped to
// fig.layout.strip.chars characters a line). Returns the y under its labels.
function strip(fig, m, name, top, color) {
  const { cmap, log_range: [lo, hi] } = fig.data;
  const { x0, w, chars } = fig.layout.strip;
  const h = 22, context = Math.pow(2, fig.state.k);
  const wl = wavelengthsAt(m, context);
  const pairs = m.layout === "interleaved" ? "interleaved pairs (2i, 2i+1)" : "half-split pairs (i, i + r/2)";
  const caption = textLines(fig.svg, x0, top, `${fig.state[name === "A" ? "model_a" : "model_b"]}: ${m.rotary_dim} of ${m.head_dim} coordinates rotate, ${pairs}`,
    chars, { class: "legend-label" });
  const y = top + 15 * (caption.lines.length - 1) + 5;
  text(fig.svg, x0 - 10, y + 16, name, { class: "plot-title", "text-anchor": "end", fill: color });
  // One image per strip (a pixel per coordinate, scaled up without smoothing) rather than a
  // rectangle per coordinate: 256-wide heads made hundreds of SVG nodes and slow redraws.
  const cells = document.createElement("canvas"), bars = document.createElement("canvas");
  cells.width = bars.width = m.head_dim;
  cells.height = bars.height = 1;
  const cctx = cells.getContext("2d"), bctx = bars.getContext("2d");
  let anySlow = false;
  for (let j = 0; j < m.head_dim; j++) {
    const p = m.pair[j];
    cctx.fillStyle = p < 0 ? "#e4e4e4" : colormap(cmap, (Math.log10(wl[p]) - lo) / (hi - lo));
    cctx.fillRect(j, 0, 1, 1);
    if (p >= 0 && wl[p] > context) {
      bctx.fillStyle = COLORS.accent;
      bctx.fillRect(j, 0, 1, 1);
      anySlow = true;
    }
  }
  const pixelated = { preserveAspectRatio: "none", style: "image-rendering: pixelated" };
  el("image", { x: x0, y, width: w, height: h, href: cells.toDataURL(), ...pixelated }, fig.svg);
  if (anySlow) el("image", { x: x0, y: y + h + 2, width: w, height: 4, href: bars.toDataURL(), ...pixelated }, fig.svg);
  el("rect", { x: x0, y, width: w, height: h, fill: "none", stroke: "#555", "stroke-width": 0.8 }, fig.svg);
  text(fig.svg, x0, y + h + 16, "coordinate 0", { class: "tick-label" });
  text(fig.svg, x0 + w, y + h + 16, `${m.head_dim - 1}`, { class: "tick-label", "text-anchor": "end" });
  return y + h + 16;
}

function draw(fig) {
  const { model_a, model_b, k } = fig.state;
  const d = fig.data, A = d.models[model_a], B = d.models[model_b];
  const r = compute(fig.state, d);
  const context = r.context;
  const L = fig.layout;
  fig.heading("Coordinates of one query head, coloured by the wavelength of their pair", 16);
  let y = strip(fig, A, "A", 43, COLORS.q);
  y = strip(fig, B, "B", Math.max(y + 27, 113), COLORS.k);

  // Colour bar for the strips (horizontal, log10 wavelength): its label left of it, or above it.
  const [lo, hi] = d.log_range, cb = { ...L.bar, y: y + L.bar.dy, h: 10 };
  const id = uniqueId("rope-cbar");
  const grad = el("linearGradient", { id, x1: 0, y1: 0, x2: 1, y2: 0 }, el("defs", {}, fig.svg));
  d.cmap.forEach((c, i) => el("stop", { offset: i / (d.cmap.length - 1), "stop-color": c }, grad));
  el("rect", { x: cb.x, y: cb.y, width: cb.w, height: cb.h, fill: `url(#${id})`, stroke: "#666", "stroke-width": 0.8 }, fig.svg);
  for (let e = 1; e <= 8; e++) {
    const X = cb.x + ((e - lo) / (hi - lo)) * cb.w;
    el("line", { x1: X, x2: X, y1: cb.y + cb.h, y2: cb.y + cb.h + 4, class: "tick" }, fig.svg);
    text(fig.svg, X, cb.y + cb.h + 15, e === 1 ? "10" : `1e${e}`, { class: "tick-label", "text-anchor": "middle" });
  }
  if (L.bar.label === "above") text(fig.svg, cb.x, cb.y - 6, "wavelength (positions)", { class: "tick-label" });
  else text(fig.svg, cb.x - 8, cb.y + 9, "wavelength (positions)", { class: "tick-label", "text-anchor": "end" });
  // The two keys: side by side, or one under the other.
  const k1 = { x: L.keys[0][0], y: cb.y + L.keys[0][1] }, k2 = { x: L.keys[1][0], y: cb.y + L.keys[1][1] };
  el("rect", { x: k1.x, y: k1.y, width: 12, height: 4, fill: COLORS.accent }, fig.svg);
  const slowKey = textLines(fig.svg, k1.x + 18, k1.y + 5, "pair slower than the context (less than one turn within it)", L.keyChars, { class: "tick-label" }, 14);
  const k2y = k2.y + 14 * (slowKey.lines.length - 1) * (L.keys[1][0] === L.keys[0][0] ? 1 : 0);
  el("rect", { x: k2.x, y: k2y, width: 12, height: 9, fill: "#e4e4e4", stroke: "#999" }, fig.svg);
  text(fig.svg, k2.x + 18, k2y + 8, "no position: passes through unrotated", { class: "tick-label" });

  // Wavelength of every rotated pair against its index (as a fraction of the pairs).
  const p = plot(fig.svg, { ...L.plot, y: k2y + L.plot.y }, {
    x: [0, 1], y: [1, 1e9], ylog: true, xticks: [0, 0.25, 0.5, 0.75, 1],
    xlabel: "pair index i / (rotated dims / 2)", ylabel: "wavelength 2π/θᵢ (positions)", ylabelOffset: 52,
  });
  for (const [m, color] of [[A, COLORS.q], [B, COLORS.k]]) {
    const wl = wavelengthsAt(m, context), n = wl.length;
    const pts = wl.map((w, i) => [i / n, w]);
    line(p, pts, { stroke: color });
    for (const [x, yy] of pts) el("circle", { cx: p.sx(x), cy: p.sy(yy), r: 1.8, fill: color }, p.g);
  }
  line(p, [[0, context], [1, context]], { stroke: COLORS.grey, "stroke-dasharray": "5 4", "stroke-width": 1.5 });
  // its legend: right of the plot, or under it
  const lg = L.legend === "below" ? { x: L.strip.x0, y: p.box.y + p.box.h + 62 } : { x: 548, y: p.box.y + 18 };
  legend(fig.svg, lg.x, lg.y, [
    [`A: ${model_a}`, COLORS.q], [`B: ${model_b}`, COLORS.k], [`context: ${fmt(context, 0)} tokens`, COLORS.grey, true],
  ]);
  textLines(fig.svg, lg.x, lg.y + 60, "Pairs above the dashed line turn less than once over the context.", L.legend === "below" ? 50 : 27,
    { class: "legend-label" }, 16);

  if (L.compact) {
    // a phone: the models side by side in three short rows (the slider shows the context, the
    // strips the fraction rotated)
    for (const [key, label, digits] of [["rot", "rotated dims", 0], ["slow", "slow pairs", 0], ["longest", "longest λ", 0]]) {
      fig.readout(`${key}_a`, `A: ${label}`, r[`${key}_a`], digits);
      fig.readout(`${key}_b`, `B: ${label}`, r[`${key}_b`], digits);
    }
    return;
  }
  fig.readout("context", "context length", context, 0, "tokens");
  fig.readout("rot_a", "A: rotated dims", r.rot_a, 0);
  fig.readout("frac_a", "A: fraction rotated", r.frac_a, 3);
  fig.readout("longest_a", "A: longest wavelength", r.longest_a, 0, "positions");
  fig.readout("slow_a", "A: pairs slower than the context", r.slow_a, 0);
  fig.readout("rot_b", "B: rotated dims", r.rot_b, 0);
  fig.readout("frac_b", "B: fraction rotated", r.frac_b, 3);
  fig.readout("longest_b", "B: longest wavelength", r.longest_b, 0, "positions");
  fig.readout("slow_b", "B: pairs slower than the context", r.slow_b, 0);
}

export { compute };
// Wide: as wide as the column. Narrow: strips, colour bar and plot narrower, captions and keys
// wrapped, the plot's legend under it, the heading above the drawing.
export default figure(draw, { layouts: [
  { width: 720, height: 490, strip: { x0: 60, w: 620, chars: 200 }, bar: { x: 160, w: 520, dy: 26 }, keys: [[60, 38], [440, 35]],
    keyChars: 200, plot: { x: 90, y: 41, w: 440, h: 180 } },
  { width: 360, height: 672, headingAbove: true, strip: { x0: 28, w: 318, chars: 48 }, bar: { x: 28, w: 318, dy: 36, label: "above" },
    keys: [[28, 36], [28, 52]], keyChars: 50, plot: { x: 80, y: 40, w: 262, h: 180 }, legend: "below", compact: true },
] });
