// Chapter 7: the attention logits q_m·k_n/√d of one LLaMA-style head for six tokens, with RoPE.
// The queries and keys before RoPE come from rope_edu (data()); here each is turned by its
// position (pair i by p·θ_i, in the head's layout) and the logits are recomputed. Shifting every
// position leaves them unchanged; moving one token changes exactly its row and its column.

const SUB = "₀₁₂₃₄₅₆₇₈₉";

// Turn vector x by position p: pair i (coordinates a[i], b[i]) counter-clockwise by p·θ_i.
function rope(x, p, invFreq, layout) {
  const h = invFreq.length, y = x.slice();
  for (let i = 0; i < h; i++) {
    const [a, b] = layout === "half" ? [i, i + h] : [2 * i, 2 * i + 1];
    const c = Math.cos(p * invFreq[i]), s = Math.sin(p * invFreq[i]);
    y[a] = x[a] * c - x[b] * s;
    y[b] = x[b] * c + x[a] * s;
  }
  return y;
}

function logitTable(d, positions) {
  const q = d.q.map((x, t) => rope(x, positions[t], d.inv_freq, d.layout));
  const k = d.k.map((x, t) => rope(x, positions[t], d.inv_freq, d.layout));
  const scale = Math.sqrt(d.head_dim);
  return q.map((qi) => k.map((kj) => qi.reduce((acc, v, j) => acc + v * kj[j], 0) / scale));
}

// Linear interpolation in a list of hex colour stops; t in [0, 1].
function colormap(stops, t) {
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
  const rgb = (hex) => [1, 3, 5].map((j) => parseInt(hex.slice(j, j + 2), 16));
  const a = rgb(stops[i]), b = rgb(stops[i + 1]);
  return `rgb(${a.map((v, j) => Math.round(v + f * (b[j] - v))).join(",")})`;
}

// A vertical colour bar in {x, y, w, h} for values [lo, hi], ticks on its right.
function colorbar(svg, box, stops, lo, hi) {
  const id = `rope-cbar-${++FIG_COUNTER}`;
  const grad = el("linearGradient", { id, x1: 0, y1: 1, x2: 0, y2: 0 }, el("defs", {}, svg));
  stops.forEach((c, i) => el("stop", { offset: i / (stops.length - 1), "stop-color": c }, grad));
  el("rect", { x: box.x, y: box.y, width: box.w, height: box.h, fill: `url(#${id})`, stroke: "#666", "stroke-width": 0.8 }, svg);
  const sy = (v) => box.y + box.h - ((v - lo) / (hi - lo)) * box.h;
  for (const t of niceTicks(lo, hi, 4)) {
    if (t < lo - 1e-9 || t > hi + 1e-9) continue;
    el("line", { x1: box.x + box.w, x2: box.x + box.w + 4, y1: sy(t), y2: sy(t), class: "tick" }, svg);
    text(svg, box.x + box.w + 6, sy(t) + 4, tickLabel(t, false), { class: "tick-label" });
  }
}

// A heatmap of the n×n matrix `values` in box, rows top to bottom; returns the plot (scales, box).
function heatmap(svg, box, values, stops, lim, labels, title, ylabel) {
  const n = values.length;
  const p = plot(svg, box, {
    x: [-0.5, n - 0.5], y: [-0.5, n - 0.5], grid: false,
    xticks: [], yticks: labels.map((s, i) => [n - 1 - i, s]),
    title, ylabel, ylabelOffset: 62,
  });
  const cw = p.sx(1) - p.sx(0);
  values.forEach((row, i) => row.forEach((v, j) => {
    el("rect", { x: p.sx(j - 0.5), y: p.sy(n - 1 - i + 0.5), width: cw + 0.3, height: cw + 0.3,
      fill: colormap(stops, (v + lim) / (2 * lim)) }, p.g);
  }));
  labels.forEach((s, j) => {  // key labels, slanted under the columns
    const t = text(svg, 0, 0, s, { class: "tick-label", "text-anchor": "end" });
    t.setAttribute("transform", `translate(${p.sx(j) + 4},${p.box.y + p.box.h + 10}) rotate(-50)`);
  });
  text(svg, p.box.x + p.box.w / 2, p.box.y + p.box.h + 62, "key (token@position)", { class: "axis-label", "text-anchor": "middle" });
  return p;
}

function outline(p, n, token, moved) {
  // The moved token's row and column.
  const attrs = { fill: "none", stroke: moved ? COLORS.black : COLORS.grey, "stroke-width": moved ? 2 : 1.5, "stroke-dasharray": moved ? null : "4 3" };
  const x0 = p.box.x, y0 = p.box.y, w = p.box.w, cell = w / n;
  el("rect", { x: x0 + 1, y: y0 + token * cell, width: w - 2, height: cell, ...attrs }, p.g);
  el("rect", { x: x0 + token * cell, y: y0 + 1, width: cell, height: w - 2, ...attrs }, p.g);
}

function draw(fig) {
  const { shift, move, token } = fig.state;
  const d = fig.data, n = d.tokens.length;
  const base = [...Array(n).keys()];
  const positions = base.map((i) => i + shift + (i === token ? move : 0));
  const now = logitTable(d, positions), before = logitTable(d, base);
  const change = now.map((row, i) => row.map((v, j) => v - before[i][j]));
  let maxChange = 0, nChanged = 0;
  for (const row of change) for (const v of row) if (Math.abs(v) > d.threshold) { nChanged++; maxChange = Math.max(maxChange, Math.abs(v)); }
  const labels = d.tokens.map((w, i) => `${w}@${positions[i]}`);
  const svg = fig.svg;

  const head = move !== 0 ? `every position + shift, then “${d.tokens[token]}” moved: its row and column outlined`
    : `every position + shift; dashed: the row and column of “${d.tokens[token]}”, the token that “move” moves`;
  text(svg, fig.width / 2, 16, head, { class: "legend-label", "text-anchor": "middle" });
  const left = heatmap(svg, { x: 92, y: 48, w: 192, h: 192 }, now, d.cmap_logits, d.lim, labels, "logits q·k/√d", "query (token@position)");
  colorbar(svg, { x: left.box.x + left.box.w + 10, y: left.box.y, w: 11, h: left.box.h }, d.cmap_logits, -d.lim, d.lim);
  const right = heatmap(svg, { x: 420, y: 48, w: 192, h: 192 }, change, d.cmap_change, d.lim / 2, labels, "change from positions 0..5", "");
  colorbar(svg, { x: right.box.x + right.box.w + 10, y: right.box.y, w: 11, h: right.box.h }, d.cmap_change, -d.lim / 2, d.lim / 2);
  for (const p of [left, right]) outline(p, n, token, move !== 0);

  positions.forEach((p, i) => fig.readout(`position_${i}`, `pos(${d.tokens[i]}${SUB[i]})`, p, 0));
  fig.readout("max_change", "largest |change|", maxChange, 3);
  fig.readout("n_changed", "logits changed", nChanged, 0, `of ${n * n}`);
  fig.note(nChanged === 0
    ? "No logit changed (beyond floating-point rounding, below 1e−9): a shift of every position leaves RoPE's logits alone."
    : "Only the moved token's row and column changed, except its logit with itself (distance 0).");
}

export default figure(draw, { width: 680, height: 320 });
