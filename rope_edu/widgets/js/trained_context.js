// Chapter 9, page 2: SmolLM2-135M's measured perplexity over every 1,024 tokens of Hamlet against
// the position, one line per checked method, at the scale s picked (the text runs to s × 8,192
// tokens); under it, the share of pass keys the model retrieves against the prompt length (s = 2).
// Every number is a cache's (rope_edu.widgets.trained_context.data(): the runs of
// scripts/trained_context.py and scripts/trained_retrieval.py); the browser only picks, draws and
// prints them.

// How each method is drawn: its colour and dash (the same as the book's static plots).
const METHOD_STYLE = {
  plain: [COLORS.grey, null],
  pi: [COLORS.q, null],
  ntk: [COLORS.k, "6 3"],
  dynamic: [COLORS.accent, "2 3"],
  yarn: [COLORS.v, null],
  llama3: [COLORS.orange, "8 3 2 3"],
};
const METHOD_KEYS = Object.keys(METHOD_STYLE);
// The phone's readouts name the methods as briefly as the prose does.
const TINY = { plain: "plain", pi: "PI", ntk: "NTK", dynamic: "dyn. NTK", yarn: "YaRN", llama3: "Llama 3.1" };
const PPL_TICKS = [5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

function grouped(v) { return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

// What the figure shows for one state: the counterpart of trained_context.readouts.
function compute(state, data) {
  const f = data.factors[state.factor];
  const w = data.window;
  const start = Math.min(state.position, f.n_tokens - w);
  const shown = METHOD_KEYS.filter((k) => state[k] && k in f.perplexity);
  const readouts = { start };
  for (const k of shown) readouts[k] = f.perplexity[k][start / w];
  const missing = METHOD_KEYS.filter((k) => !(k in f.perplexity)).map((k) => data.names[k]);
  const R = data.retrieval, col = R.lengths.indexOf(Number(state.length));
  const ret = R.depths[state.depth];
  const retShown = METHOD_KEYS.filter((k) => state[k] && ret[k].trials[col] > 0);
  for (const k of retShown) {
    readouts[`${k}_rate`] = 100 * ret[k].rate[col];
    readouts[`${k}_logp`] = ret[k].log_prob[col];
  }
  return { start, shown, missing, readouts, col, ret, retShown };
}

function draw(fig) {
  const d = fig.data, f = d.factors[fig.state.factor], w = d.window;
  const c = compute(fig.state, d);
  const s = Number(fig.state.factor);
  const box = fig.layout.box;
  // the y range of every method at this s, so that checking a box does not move the axis
  let lo = Infinity, hi = 0;
  for (const v of Object.values(f.perplexity)) for (const x of v) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
  const y0 = PPL_TICKS.filter((t) => t <= lo * 0.9).pop() || lo * 0.8;
  const y1 = PPL_TICKS.find((t) => t >= hi * 1.1) || hi * 1.25;
  const step = f.n_tokens > 16384 ? 8192 : 4096;
  const xticks = [];
  for (let t = 0; t <= f.n_tokens; t += step) xticks.push([t, t === 0 ? "0" : `${t / 1024}K`]);
  fig.heading(`SmolLM2-135M, s = ${s}: tokens ${grouped(c.start)} to ${grouped(c.start + w)}`);
  // a short panel (the phone layout) labels the powers of ten only, where 1-2-5 labels would touch
  const perDecade = box.h / Math.log10(y1 / y0);
  const yticks = PPL_TICKS.filter((t) => t >= y0 && t <= y1 && (perDecade >= 60 || Number.isInteger(Math.log10(t))));
  const p = plot(fig.svg, box, {
    x: [0, f.n_tokens], y: [y0, y1], ylog: true, xticks,
    yticks: yticks.map((t) => [t, grouped(t)]),
    xlabel: "position in the text (tokens)",
    ylabel: "perplexity (log)", ylabelOffset: 46,
  });
  // the window on the slider, the trained length L
  el("rect", { x: p.sx(c.start), y: p.box.y, width: p.sx(c.start + w) - p.sx(c.start), height: p.box.h,
    fill: COLORS.sky, opacity: 0.25 }, p.g);
  const X = p.sx(f.trained);
  el("line", { x1: X, x2: X, y1: p.box.y, y2: p.box.y + p.box.h, stroke: COLORS.black, "stroke-width": 1.2,
    "stroke-dasharray": "4 3" }, p.g);
  text(p.g, X + 4, p.box.y + 14, "trained length L", { class: "legend-label" });
  for (const k of c.shown) {
    const [color, dash] = METHOD_STYLE[k];
    const v = f.perplexity[k];
    line(p, v.map((y, i) => [i * w + w / 2, y]), { stroke: color, "stroke-width": 2, "stroke-dasharray": dash });
    el("circle", { cx: p.sx(c.start + w / 2), cy: p.sy(c.readouts[k]), r: 4.5, fill: color, stroke: "#fff",
      "stroke-width": 1 }, p.g);
  }
  // retrieval: the share of keys retrieved against the prompt length (s = 2), under the perplexity
  const R = d.retrieval, rb = fig.layout.rbox;
  const rp = plot(fig.svg, rb, {
    x: [0, 17408], y: [-0.08, 1.08],
    xticks: [0, 4096, 8192, 12288, 16384].map((t) => [t, t === 0 ? "0" : `${t / 1024}K`]),
    yticks: [[0, "0"], [0.5, "50 %"], [1, "100 %"]],
    xlabel: `prompt length (tokens), s = ${R.factor}`, ylabel: "keys retrieved", ylabelOffset: 46,
  });
  const RX = rp.sx(R.trained);
  el("line", { x1: RX, x2: RX, y1: rp.box.y, y2: rp.box.y + rp.box.h, stroke: COLORS.black, "stroke-width": 1.2,
    "stroke-dasharray": "4 3" }, rp.g);
  const LX = rp.sx(R.lengths[c.col]);
  el("line", { x1: LX, x2: LX, y1: rp.box.y, y2: rp.box.y + rp.box.h, stroke: COLORS.sky, "stroke-width": 8,
    opacity: 0.35 }, rp.g);
  METHOD_KEYS.filter((k) => fig.state[k]).forEach((k, j) => {
    const [color, dash] = METHOD_STYLE[k];
    const r = c.ret[k];
    const pts = R.lengths.map((n, i) => [n, r.trials[i] > 0 ? r.rate[i] : null]);
    line(rp, pts, { stroke: color, "stroke-width": 2, "stroke-dasharray": dash });
    // a small vertical offset per method, so that equal shares stay visible side by side
    pts.forEach(([x, y]) => {
      if (y !== null) el("circle", { cx: rp.sx(x), cy: rp.sy(y) + (j - 2.5) * 2, r: 3.5, fill: color,
        stroke: "#fff", "stroke-width": 1 }, rp.g);
    });
  });
  const open = METHOD_KEYS.filter((k) => fig.state[k] && !(c.ret[k].trials[c.col] > 0));
  if (open.length) {
    fig.note(`No retrieval trial at ${grouped(R.lengths[c.col])} tokens for: `
      + open.map((k) => d.names[k] + (c.ret[k].skipped[c.col] ? " (not run inside L: plain RoPE's frequencies)" : ""))
        .join(", ") + ".");
  }
  if (s !== R.factor) fig.note(`Retrieval was measured at s = ${R.factor} only.`);

  // the key: every method, the unchecked ones faded
  // (the phone layout: in rows of columns, key.columns apart, under no title)
  const g = el("g", { class: "legend" }, fig.svg);
  const { x: kx, y: ky, rows = METHOD_KEYS.length, columns = 0, rowHeight = 18 } = fig.layout.key;
  if (!columns) text(g, kx, ky - 14, "methods (check boxes)", { class: "legend-label" });
  METHOD_KEYS.forEach((k, i) => {
    const [color, dash] = METHOD_STYLE[k];
    const on = c.shown.includes(k);
    const xx = kx + Math.floor(i / rows) * columns, yy = ky + 6 + (i % rows) * rowHeight;
    el("line", { x1: xx, x2: xx + 24, y1: yy, y2: yy, stroke: color, "stroke-width": 2.5, "stroke-dasharray": dash,
      opacity: on ? 1 : 0.3 }, g);
    text(g, xx + 30, yy + 4, d.names[k], { class: "legend-label" });
  });
  if (f.n_tokens < d.window * 32 && fig.state.position > c.start) {
    fig.note(`At s = ${s} the text ends at ${grouped(f.n_tokens)} tokens: the figure reads its last window.`);
  }
  if (c.missing.length) fig.note(`Not in the cache at s = ${s}: ${c.missing.join(", ")}.`);

  if (fig.layout.compact) {
    // a phone: two or three lines under the drawing, each checked method's perplexity in the window
    // and its share of keys at the prompt length (the heading gives the window, the menu the length)
    for (const k of c.shown) fig.readout(k, `${TINY[k]}: ppl`, c.readouts[k], 1);
    for (const k of c.retShown) {
      fig.readout(`${k}_rate`, `${TINY[k]}: keys of ${c.ret[k].trials[c.col]}`, c.readouts[`${k}_rate`], 0, "%");
    }
    return;
  }
  // a wide screen: the methods by their short names too, so that the readouts take three or four
  // lines and the figure, readouts included, fits a 1280 x 800 screen (the menu gives the length)
  fig.readout("start", "window's first token", c.start, 0, "tokens");
  for (const k of c.shown) fig.readout(k, `${TINY[k]}: perplexity`, c.readouts[k], 1);
  for (const k of c.retShown) {
    const n = c.ret[k].trials[c.col];
    fig.readout(`${k}_rate`, `${TINY[k]}: keys retrieved (of ${n})`, c.readouts[`${k}_rate`], 0, "%");
    fig.readout(`${k}_logp`, `${TINY[k]}: mean log p of the key`, c.readouts[`${k}_logp`], 2);
  }
}

export { compute };
// Wide: the key right of the plots, the panels short enough that the controls, both panels and
// the readouts fit a 1280 x 800 screen. Narrow (a phone): a short drawing, so that the controls
// and both panels they change fit one screen: shorter panels, the key between them in two columns.
export default figure(draw, { layouts: [
  { width: 756, height: 436, box: { x: 70, y: 30, w: 470, h: 190 }, rbox: { x: 70, y: 282, w: 470, h: 104 },
    key: { x: 576, y: 74 } },
  { width: 380, height: 366, headingAbove: true, compact: true, box: { x: 58, y: 8, w: 306, h: 140 },
    key: { x: 58, y: 188, rows: 3, columns: 168, rowHeight: 16 }, rbox: { x: 58, y: 252, w: 306, h: 76 } },
] });
