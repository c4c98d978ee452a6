// Chapter 1: reorder "the cat sat on the mat" and look at the self-attention outputs. Without
// positions every word keeps its output wherever it stands (the rows only travel with their
// words, and the two copies of "the" get the same row); with sinusoidal positions added to the
// embeddings the outputs depend on the order. Every number is precomputed by rope_edu (data());
// the readouts print rounding noise below d.zero as 0, as readouts() does in Python.

function draw(fig) {
  const { order, positions } = fig.state;
  const d = fig.data;
  const pos = positions ? 1 : 0;
  const words = d.orders[order].map((i) => d.sentence[i]);
  const n = words.length, dim = d.outputs[pos][order][0].length;
  const out = d.outputs[pos][order], change = d.change[pos][order];
  const maxChange = d.max_change[pos][order], theGap = d.the_gap[pos][order];
  const [vmin, vmax] = d.vrange[pos];
  const mode = positions ? "embeddings + sinusoidal positions" : "embeddings only (no positions)";
  fig.heading(`“${words.join(" ")}”: ${mode}`);

  // Left: the outputs, one row per position (position 0 at the top, as the sentence is read).
  const row = (p) => n - 1 - p;
  const h = cmapGrid(fig.svg, fig.layout.grid, out, {
    cmap: "cividis", lo: vmin, hi: vmax,
    rows: words.map((w, p) => `${p}: ${w}`), cols: [...Array(dim).keys()],
    xlabel: "output feature", ylabel: "position: word", ylabelOffset: 72,
    title: "self-attention output",
  });
  const ch = h.cell.h;
  // The two copies of "the": outlined; without positions their rows are identical.
  words.forEach((w, p) => {
    if (w !== "the") return;
    el("rect", { x: h.box.x + 1.5, y: h.rowY(p) + 1.5, width: h.box.w - 3, height: ch - 3,
      fill: "none", stroke: COLORS.accent, "stroke-width": 3 }, h.g);
  });
  cmapBar(fig.svg, { x: h.box.x + h.box.w + 12, y: h.box.y, w: 12, h: h.box.h }, "cividis", vmin, vmax, { label: "output value" });

  // Right: how far each word's output moved against the original order.
  const b = plot(fig.svg, { x: 466, y: 48, w: 190, h: 240 }, {
    x: [0, 1.05 * d.cmax], y: [-0.5, n - 0.5], yticks: [], nticks: 4,
    xlabel: "‖output − original output‖", title: "change vs. original order",
  });
  const barColor = positions ? COLORS.k : COLORS.q;
  for (let p = 0; p < n; p++) {
    el("rect", { x: b.sx(0), y: b.sy(row(p)) - 0.35 * ch, width: Math.max(b.sx(change[p]) - b.sx(0), 0), height: 0.7 * ch, fill: barColor }, b.g);
  }
  if (snapZero(maxChange, d.zero) === 0) {
    const cx = b.box.x + b.box.w / 2, cy = b.box.y + b.box.h / 2;
    const lines = order === 0 ? ["order 0 is the", "original order:", "nothing moved"]
      : ["0 for every word:", "the outputs only", "moved with their", "words"];
    lines.forEach((s, i) =>
      text(b.g, cx, cy - 24 + 16 * i, s, { class: "legend-label", "text-anchor": "middle", fill: COLORS.q }));
  }
  el("rect", { x: 112, y: 326, width: 18, height: 12, fill: "none", stroke: COLORS.accent, "stroke-width": 3 }, fig.svg);
  text(fig.svg, 138, 337, "the two copies of “the”", { class: "legend-label" });

  fig.readout("max_change", "largest change of a word's output", maxChange, 3, "", { zero: d.zero });
  fig.readout("the_gap", "‖out(the) − out(the)‖", theGap, 3, "", { zero: d.zero });
  if (!positions) fig.note("Without positions the changes are 0 (up to floating-point rounding, about 1e−16, printed as 0): the outputs only move with their words.");
  else fig.note("With positions added, the same word gets a different output in another place, and the two “the” differ.");
}

// Wide: outputs and changes side by side. Narrow: a narrower heatmap, the panels stacked
// (tiles), the heading above.
export default figure(draw, { layouts: [
  { width: 680, height: 350, grid: { x: 112, y: 48, w: 256, h: 240 } },
  { width: 680, height: 350, grid: { x: 108, y: 48, w: 190, h: 240 },
    tiles: [[0, 26, 368, 299], [440, 26, 240, 299], [100, 322, 220, 24]] },
] });
