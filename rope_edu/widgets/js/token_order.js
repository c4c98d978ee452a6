// Chapter 1: reorder "the cat sat on the mat" and look at the self-attention outputs. Without
// positions every word keeps its output wherever it stands (the rows only travel with their
// words, and the two copies of "the" get the same row); with sinusoidal positions added to the
// embeddings the outputs depend on the order. Every number is precomputed by rope_edu (data()).

// Linear interpolation in a list of hex colour stops; t in [0, 1].
function colormap(stops, t) {
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
  const rgb = (h) => [1, 3, 5].map((j) => parseInt(h.slice(j, j + 2), 16));
  const a = rgb(stops[i]), b = rgb(stops[i + 1]);
  return `rgb(${a.map((v, j) => Math.round(v + f * (b[j] - v))).join(",")})`;
}

// A vertical colour bar in {x, y, w, h} for values [lo, hi], ticks on the right, label beside.
function colorbar(svg, box, stops, lo, hi, label) {
  const id = `rope-cbar-${++FIG_COUNTER}`;
  const grad = el("linearGradient", { id, x1: 0, y1: 1, x2: 0, y2: 0 }, el("defs", {}, svg));
  stops.forEach((c, i) => el("stop", { offset: i / (stops.length - 1), "stop-color": c }, grad));
  el("rect", { x: box.x, y: box.y, width: box.w, height: box.h, fill: `url(#${id})`, stroke: "#666", "stroke-width": 0.8 }, svg);
  const sy = (v) => box.y + box.h - ((v - lo) / (hi - lo)) * box.h;
  for (const t of niceTicks(lo, hi, 5)) {
    if (t < lo || t > hi) continue;
    el("line", { x1: box.x + box.w, x2: box.x + box.w + 4, y1: sy(t), y2: sy(t), class: "tick" }, svg);
    text(svg, box.x + box.w + 6, sy(t) + 4, tickLabel(t, false), { class: "tick-label" });
  }
  const yl = text(svg, 0, 0, label, { class: "axis-label", "text-anchor": "middle" });
  yl.setAttribute("transform", `translate(${box.x + box.w + 44},${box.y + box.h / 2}) rotate(-90)`);
}

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
  text(fig.svg, fig.width / 2, 18, `“${words.join(" ")}”: ${mode}`, { class: "plot-title", "text-anchor": "middle" });

  // Left: the outputs, one row per position (position 0 at the top, as the sentence is read).
  const row = (p) => n - 1 - p;
  const h = plot(fig.svg, { x: 112, y: 48, w: 256, h: 240 }, {
    x: [-0.5, dim - 0.5], y: [-0.5, n - 0.5], grid: false,
    xticks: [...Array(dim).keys()], yticks: words.map((w, p) => [row(p), `${p}: ${w}`]),
    xlabel: "output feature", ylabel: "position: word", ylabelOffset: 72,
    title: "self-attention output",
  });
  const cw = h.sx(1) - h.sx(0), ch = h.sy(0) - h.sy(1);
  for (let p = 0; p < n; p++) {
    for (let j = 0; j < dim; j++) {
      el("rect", {
        x: h.sx(j - 0.5), y: h.sy(row(p) + 0.5), width: cw + 0.3, height: ch + 0.3,
        fill: colormap(d.cmap, (out[p][j] - vmin) / (vmax - vmin)),
      }, h.g);
    }
  }
  // The two copies of "the": outlined; without positions their rows are identical.
  words.forEach((w, p) => {
    if (w !== "the") return;
    el("rect", { x: h.box.x + 1.5, y: h.sy(row(p) + 0.5) + 1.5, width: h.box.w - 3, height: ch - 3,
      fill: "none", stroke: COLORS.accent, "stroke-width": 3 }, h.g);
  });
  colorbar(fig.svg, { x: h.box.x + h.box.w + 12, y: h.box.y, w: 12, h: h.box.h }, d.cmap, vmin, vmax, "output value");

  // Right: how far each word's output moved against the original order.
  const b = plot(fig.svg, { x: 466, y: 48, w: 190, h: 240 }, {
    x: [0, 1.05 * d.cmax], y: [-0.5, n - 0.5], yticks: [], nticks: 4,
    xlabel: "‖output − original output‖", title: "change vs. original order",
  });
  const barColor = positions ? COLORS.k : COLORS.q;
  for (let p = 0; p < n; p++) {
    el("rect", { x: b.sx(0), y: b.sy(row(p)) - 0.35 * ch, width: Math.max(b.sx(change[p]) - b.sx(0), 0), height: 0.7 * ch, fill: barColor }, b.g);
  }
  if (maxChange < 1e-9) {
    const cx = b.box.x + b.box.w / 2, cy = b.box.y + b.box.h / 2;
    const lines = order === 0 ? ["order 0 is the", "original order:", "nothing moved"]
      : ["0 for every word:", "the outputs only", "moved with their", "words"];
    lines.forEach((s, i) =>
      text(b.g, cx, cy - 24 + 16 * i, s, { class: "legend-label", "text-anchor": "middle", fill: COLORS.q }));
  }
  el("rect", { x: 112, y: 326, width: 18, height: 12, fill: "none", stroke: COLORS.accent, "stroke-width": 3 }, fig.svg);
  text(fig.svg, 138, 337, "the two copies of “the”", { class: "legend-label" });

  fig.readout("max_change", "largest change of a word's output", maxChange, 3);
  fig.readout("the_gap", "‖out(the) − out(the)‖", theGap, 3);
  if (!positions) fig.note("Without positions the changes are 0 up to floating-point rounding (about 1e−16): the outputs only move with their words.");
  else fig.note("With positions added, the same word gets a different output in another place, and the two “the” differ.");
}

export default figure(draw, { width: 680, height: 350 });
