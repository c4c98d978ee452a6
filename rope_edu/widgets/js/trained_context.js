// Chapter 9, page 2: SmolLM2-135M's measured perplexity over every 1,024 tokens of Hamlet + King
// Lear against the position, one line per checked method, at the scale s picked (the text runs to
// s × 8,192 tokens). Every number is the cache's (rope_edu.widgets.trained_context.data(): the
// runs of scripts/trained_context.py); the browser only picks, draws and prints them.

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
  return { start, shown, missing, readouts };
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
  const p = plot(fig.svg, box, {
    x: [0, f.n_tokens], y: [y0, y1], ylog: true, xticks,
    yticks: PPL_TICKS.filter((t) => t >= y0 && t <= y1).map((t) => [t, grouped(t)]),
    xlabel: "position in the text (tokens)", ylabel: "perplexity per 1,024 tokens (log)", ylabelOffset: 46,
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
  // the key: every method, the unchecked ones faded
  const g = el("g", { class: "legend" }, fig.svg);
  const { x: kx, y: ky } = fig.layout.key;
  text(g, kx, ky - 14, "methods (check boxes)", { class: "legend-label" });
  METHOD_KEYS.forEach((k, i) => {
    const [color, dash] = METHOD_STYLE[k];
    const on = c.shown.includes(k);
    const yy = ky + 6 + i * 18;
    el("line", { x1: kx, x2: kx + 24, y1: yy, y2: yy, stroke: color, "stroke-width": 2.5, "stroke-dasharray": dash,
      opacity: on ? 1 : 0.3 }, g);
    text(g, kx + 30, yy + 4, d.names[k], { class: "legend-label" });
  });
  if (f.n_tokens < d.window * 32 && fig.state.position > c.start) {
    fig.note(`At s = ${s} the text ends at ${grouped(f.n_tokens)} tokens: the figure reads its last window.`);
  }
  if (c.missing.length) fig.note(`Not in the cache at s = ${s}: ${c.missing.join(", ")}.`);

  fig.readout("start", "window's first token", c.start, 0, "tokens");
  for (const k of c.shown) fig.readout(k, `${d.names[k]}: perplexity`, c.readouts[k], 1);
}

export { compute };
// Wide: the key right of the plot. Narrow: a narrower drawing, the key under the plot.
export default figure(draw, { layouts: [
  { width: 756, height: 370, box: { x: 70, y: 36, w: 470, h: 270 }, key: { x: 576, y: 80 } },
  { width: 380, height: 460, headingAbove: true, box: { x: 62, y: 10, w: 300, h: 250 }, key: { x: 62, y: 344 } },
] });
