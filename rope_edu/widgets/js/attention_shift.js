// Chapter 7: the attention logits q_m·k_n/√d of one LLaMA-style head for six tokens, with RoPE.
// The queries and keys before RoPE come from rope_edu (data()); here each is turned by its
// position (pair i by p·θ_i, in the head's layout) and the logits are recomputed. Shifting every
// position leaves them unchanged; moving one token changes exactly its row and its column.

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

// A heatmap of the n×n matrix `values` in box, rows top to bottom, keys slanted under the columns.
function logitGrid(svg, box, values, cmap, lim, labels, title, ylabel) {
  return cmapGrid(svg, box, values, {
    cmap, lo: -lim, hi: lim, rows: labels, cols: labels, slant: true,
    title, ylabel, ylabelOffset: 62, xlabel: "key (token@position)",
  });
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
  fig.heading(head, 16, { class: "legend-label" });
  const left = logitGrid(svg, { x: 92, y: 48, w: 192, h: 192 }, now, "cividis", d.lim, labels, "logits q·k/√d", "query (token@position)");
  cmapBar(svg, { x: left.box.x + left.box.w + 10, y: left.box.y, w: 11, h: left.box.h }, "cividis", -d.lim, d.lim, { nticks: 4 });
  const right = logitGrid(svg, { x: 420, y: 48, w: 192, h: 192 }, change, "PuOr", d.lim / 2, labels, "change from positions 0..5", "");
  cmapBar(svg, { x: right.box.x + right.box.w + 10, y: right.box.y, w: 11, h: right.box.h }, "PuOr", -d.lim / 2, d.lim / 2, { nticks: 4 });
  for (const p of [left, right]) outline(p, n, token, move !== 0);

  positions.forEach((p, i) => fig.readout(`position_${i}`, `pos(${d.tokens[i]}${subscript(i)})`, p, 0));
  fig.readout("max_change", "largest |change|", maxChange, 3);
  fig.readout("n_changed", "logits changed", nChanged, 0, `of ${n * n}`);
  fig.note(nChanged === 0
    ? "No logit changed (beyond floating-point rounding, below 1e−9): a shift of every position leaves RoPE's logits alone."
    : "Only the moved token's row and column changed, except its logit with itself (distance 0).");
}

// Wide: the two heatmaps side by side. Narrow: stacked (tiles), the heading above them.
export default figure(draw, { layouts: [
  { width: 680, height: 320 },
  { width: 680, height: 320, tiles: [[0, 24, 345, 296], [350, 24, 330, 296]] },
] });
