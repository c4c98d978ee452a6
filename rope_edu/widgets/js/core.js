// rope-edu figure engine: shared browser code, prepended to every figure module.
//
// A figure module defines `draw(fig)` and ends with `export default figure(draw, {layouts})` (or
// `{width, height}` for a single layout; see "layouts" below).
// `figure` returns the anywidget entry point `{render({model, el})}`; in the static book the site's
// loader calls the same `render` with a stand-in model. `draw(fig)` gets:
//   fig.state   the current value of every control, by name
//   fig.data    the JSON data computed by rope_edu in Python
//   fig.svg     what to draw into (emptied before each draw): the <svg>, or in a tiled layout a group
//               the tiles show; fig.width, fig.height: the layout's drawing coordinates
//   fig.layout  the layout chosen for the figure's width (see "layouts" below); fig.tiled
//   fig.heading(text)  the figure's title: in the drawing, or above it (wrapping) when tiled
//   fig.readout(name, label, value, digits, unit, {zero})  a number written as text next to the
//               figure; with `zero`, |value| < zero (floating-point rounding of a true 0) prints as 0
//               (snapZero; rope_edu.widgets.snap_zero is the same rule for the Python readouts)
//   fig.note(text)  a line of explanatory text under the readouts
// Drawing helpers below: el, text, plot (axes with ticks and labels), line, arrow, legend, fmt;
// colour maps and heatmaps: cmapColor, cmapBar, cmapGrid; subscript (digits as ₀₁₂...).
// Defined before this file (by rope_edu.widgets.bundle): `COLORS` (the book's Okabe–Ito palette,
// rope_edu.plots.COLORS), `COLOR_CYCLE` (the order series take them, rope_edu.plots.CYCLE) and
// `COLORMAPS` (rope_edu.widgets.COLORMAPS: "cividis" and "PuOr" as hex stops).
//
// What a figure may use is the export statement at the end of this file (with the colours): the
// static book serves this file once as its own module and each figure's module imports those names
// (rope_edu.widgets.static_modules reads the statement); for a live notebook (anywidget needs one
// module) every figure's own file is appended to this one in a single ES module
// (rope_edu.widgets.bundle). Either way a figure must not reuse a name declared here, exported or
// not: two declarations of one name, or a declaration of an imported name, are a SyntaxError. The
// other top-level names are the engine's own; tests/test_figures.py checks no figure reads them.

const SVG_NS = "http://www.w3.org/2000/svg";
// Element ids must be unique on the whole page, and in a notebook every figure's module has its own
// copy of this file, so the counter lives on window.
function uniqueId(prefix) {
  window.__ropeFigIds = (window.__ropeFigIds || 0) + 1;
  return `${prefix}-${window.__ropeFigIds}`;
}

function el(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

// The figures' words in the reader's language (rope_edu.i18n, the same rules in Python). A catalog
// maps an English string to its translation; a key's {0}, {1}, ... stand for values filled in (a
// number, a symbol, another label, itself translated). Keys without placeholders match exactly;
// then patterns, the one with the most literal text first. A string no key matches stays as it is,
// so an English figure (no catalog) shows exactly what it shows without one.
// MESSAGES: the catalog of the figure being drawn (compileMessages), or null for English.
let MESSAGES = null;
function compileMessages(messages) {
  if (!messages || typeof messages !== "object" || !Object.keys(messages).length) return null;
  const exact = new Map(), patterns = [];
  for (const [key, value] of Object.entries(messages)) {
    if (!value) continue;
    if (/\{\d+\}/.test(key)) {
      const parts = key.split(/\{(\d+)\}/);
      const src = parts.map((p, i) => (i % 2 ? `(?<p${p}>[\\s\\S]+?)` : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("");
      patterns.push([new RegExp(`^${src}$`), value, key.replace(/\{\d+\}/g, "").length]);
    } else exact.set(key, value);
  }
  patterns.sort((a, b) => b[2] - a[2]);
  return { exact, patterns, cache: new Map() };
}
function tr(str, messages = MESSAGES) {
  if (!messages || typeof str !== "string" || !str) return str;
  if (messages.exact.has(str)) return messages.exact.get(str);
  if (messages.cache.has(str)) return messages.cache.get(str);
  let out = str;
  for (const [re, value] of messages.patterns) {
    const m = re.exec(str);
    if (!m) continue;
    const groups = m.groups || {};
    out = value.replace(/\{(\d+)\}/g, (h, i) => (`p${i}` in groups ? tr(groups[`p${i}`], messages) : h));
    break;
  }
  if (messages.cache.size > 5000) messages.cache.clear();
  messages.cache.set(str, out);
  return out;
}

function text(parent, x, y, str, attrs = {}) {
  const node = el("text", { x, y, ...attrs }, parent);
  node.textContent = MESSAGES && typeof str === "string" ? tr(str) : str;
  return node;
}

// Numbers as a reader writes them: fixed decimals, a true minus sign, no "-0.00".
function fmt(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return "n/a";
  if (!Number.isFinite(value)) return value > 0 ? "∞" : "−∞";
  let s = Math.abs(value) >= 1e6 || (value !== 0 && Math.abs(value) < Math.pow(10, -digits))
    ? value.toExponential(Math.max(digits - 1, 1)).replace("e+", "e")
    : value.toFixed(digits);
  if (/^-0(\.0*)?$/.test(s)) s = s.slice(1);
  return s.replace("-", "−");
}

function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) out.push(Math.pow(10, e));
  return out;
}

function tickLabel(t, log) {
  if (log) {
    const e = Math.round(Math.log10(t));
    return e === 0 ? "1" : e === 1 ? "10" : `1e${e}`.replace("-", "−");
  }
  const a = Math.abs(t);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return t.toExponential(0).replace("e+", "e").replace("-", "−");
  return String(+t.toPrecision(6)).replace("-", "−");
}

// Axes in the box {x, y, w, h} (viewBox units). opts: x, y ([min, max]); xlog, ylog; xlabel, ylabel;
// xticks, yticks (arrays, or [[value, label], ...]); title; equal (same units on both axes);
// grid (default true). Returns {sx, sy, g, box}: scales from data to viewBox and a clipped group.
function plot(svg, box, opts) {
  const { x: [x0, x1], y: [y0, y1] } = opts;
  const tx = opts.xlog ? Math.log10 : (v) => v;
  const ty = opts.ylog ? Math.log10 : (v) => v;
  let { x: bx, y: by, w: bw, h: bh } = box;
  if (opts.equal) {
    const k = Math.min(bw / (x1 - x0), bh / (y1 - y0));
    bx += (bw - k * (x1 - x0)) / 2; by += (bh - k * (y1 - y0)) / 2;
    bw = k * (x1 - x0); bh = k * (y1 - y0);
  }
  const sx = (v) => bx + ((tx(v) - tx(x0)) / (tx(x1) - tx(x0))) * bw;
  const sy = (v) => by + bh - ((ty(v) - ty(y0)) / (ty(y1) - ty(y0))) * bh;
  const axes = el("g", { class: "axes" }, svg);
  const grid = opts.grid !== false;
  const ticks = (given, lo, hi, log) =>
    (given || (log ? logTicks(lo, hi) : niceTicks(lo, hi, opts.nticks || 5))).map((t) => (Array.isArray(t) ? t : [t, tickLabel(t, log)]));
  for (const [t, label] of ticks(opts.xticks, x0, x1, opts.xlog)) {
    const X = sx(t);
    if (X < bx - 0.5 || X > bx + bw + 0.5) continue;
    if (grid) el("line", { x1: X, x2: X, y1: by, y2: by + bh, class: "grid" }, axes);
    el("line", { x1: X, x2: X, y1: by + bh, y2: by + bh + 4, class: "tick" }, axes);
    text(axes, X, by + bh + 15, label, { class: "tick-label", "text-anchor": "middle" });
  }
  for (const [t, label] of ticks(opts.yticks, y0, y1, opts.ylog)) {
    const Y = sy(t);
    if (Y < by - 0.5 || Y > by + bh + 0.5) continue;
    if (grid) el("line", { x1: bx, x2: bx + bw, y1: Y, y2: Y, class: "grid" }, axes);
    el("line", { x1: bx - 4, x2: bx, y1: Y, y2: Y, class: "tick" }, axes);
    text(axes, bx - 6, Y + 4, label, { class: "tick-label", "text-anchor": "end" });
  }
  el("rect", { x: bx, y: by, width: bw, height: bh, class: "frame" }, axes);
  if (opts.xlabel) text(axes, bx + bw / 2, by + bh + 32, opts.xlabel, { class: "axis-label", "text-anchor": "middle" });
  if (opts.ylabel) {
    const yl = text(axes, 0, 0, opts.ylabel, { class: "axis-label", "text-anchor": "middle" });
    yl.setAttribute("transform", `translate(${bx - (opts.ylabelOffset || 40)},${by + bh / 2}) rotate(-90)`);
  }
  if (opts.title) text(axes, bx + bw / 2, by - 8, opts.title, { class: "plot-title", "text-anchor": "middle" });
  const clipId = uniqueId("rope-clip");
  const clip = el("clipPath", { id: clipId }, el("defs", {}, svg));
  el("rect", { x: bx, y: by, width: bw, height: bh }, clip);
  const g = el("g", { "clip-path": `url(#${clipId})` }, svg);
  return { sx, sy, g, box: { x: bx, y: by, w: bw, h: bh } };
}

// A polyline through data points [[x, y], ...] in the scales of p (from plot()). Gaps at null/NaN.
function line(p, points, attrs = {}) {
  let d = "";
  let pen = false;
  for (const [x, y] of points) {
    if (y === null || x === null || !Number.isFinite(y) || !Number.isFinite(x)) { pen = false; continue; }
    d += `${pen ? "L" : "M"}${p.sx(x).toFixed(2)},${p.sy(y).toFixed(2)}`;
    pen = true;
  }
  return el("path", { d, fill: "none", "stroke-width": 2, ...attrs }, p.g);
}

// An arrow from (x0, y0) to (x1, y1) in viewBox units.
function arrow(parent, x0, y0, x1, y1, color, attrs = {}) {
  const g = el("g", { class: "arrow", ...attrs }, parent);
  const dx = x1 - x0, dy = y1 - y0, len = Math.hypot(dx, dy);
  if (len < 1e-9) return g;
  const head = Math.min(10, len * 0.4), ux = dx / len, uy = dy / len;
  const bx = x1 - ux * head, by = y1 - uy * head;
  el("line", { x1: x0, y1: y0, x2: bx, y2: by, stroke: color, "stroke-width": attrs["stroke-width"] || 2.5 }, g);
  el("polygon", {
    points: `${x1},${y1} ${bx - uy * head * 0.45},${by + ux * head * 0.45} ${bx + uy * head * 0.45},${by - ux * head * 0.45}`,
    fill: color,
  }, g);
  return g;
}

// A legend: items [[label, color, dashed?], ...] stacked from (x, y).
function legend(parent, x, y, items) {
  const g = el("g", { class: "legend" }, parent);
  items.forEach(([label, color, dash], i) => {
    const yy = y + i * 16;
    el("line", { x1: x, x2: x + 18, y1: yy, y2: yy, stroke: color, "stroke-width": 2.5, "stroke-dasharray": dash ? "4 3" : null }, g);
    text(g, x + 24, yy + 4, label, { class: "legend-label" });
  });
  return g;
}

// Digits of an integer as subscripts: subscript(12) === "₁₂", subscript(-3) === "₋₃".
function subscript(n) {
  return String(n).replace(/[0-9-]/g, (c) => (c === "-" ? "₋" : "₀₁₂₃₄₅₆₇₈₉"[+c]));
}

// What a readout shows for value: 0 where |value| < zero (floating-point rounding of a true 0),
// value otherwise (NaN stays NaN). rope_edu.widgets.snap_zero is the same rule in Python.
function snapZero(value, zero = 0) {
  return typeof value === "number" && Math.abs(value) < zero ? 0 : value;
}

// --- colour maps and heatmaps ----------------------------------------------------------------
// A colour map `cmap` is a name in COLORMAPS ("cividis": sequential, dark blue to yellow; "PuOr":
// diverging, orange below the middle, near-white at it, purple above, for signed values over a
// range symmetric about 0), both colour-blind safe, or a list of "#rrggbb" stops.

// The colour at t in [0, 1] (clamped) of colour map cmap, linear between its stops, as
// "rgb(r,g,b)"; grey for a missing value (NaN, null).
function cmapColor(cmap, t) {
  const stops = typeof cmap === "string" ? COLORMAPS[cmap] : cmap;
  if (!stops) throw new Error(`rope-edu figure: unknown colour map ${cmap}`);
  if (t === null || !Number.isFinite(t)) return COLORS.grey;
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
  const rgb = (h) => [1, 3, 5].map((j) => parseInt(h.slice(j, j + 2), 16));
  const a = rgb(stops[i]), b = rgb(stops[i + 1]);
  return `rgb(${a.map((v, j) => Math.round(v + f * (b[j] - v))).join(",")})`;
}

// A vertical colour bar in box {x, y, w, h} for values lo (bottom) to hi (top), ticks on its right.
// opts: label (rotated, right of the ticks), labelOffset (its distance from the bar's right
// edge, default 44), nticks (default 5).
function cmapBar(svg, box, cmap, lo, hi, opts = {}) {
  const stops = typeof cmap === "string" ? COLORMAPS[cmap] : cmap;
  const id = uniqueId("rope-cbar");
  const grad = el("linearGradient", { id, x1: 0, y1: 1, x2: 0, y2: 0 }, el("defs", {}, svg));
  stops.forEach((c, i) => el("stop", { offset: i / (stops.length - 1), "stop-color": c }, grad));
  const g = el("g", { class: "colorbar" }, svg);
  el("rect", { x: box.x, y: box.y, width: box.w, height: box.h, fill: `url(#${id})`, stroke: "#666", "stroke-width": 0.8 }, g);
  const sy = (v) => box.y + box.h - ((v - lo) / (hi - lo)) * box.h;
  const tol = 1e-9 * Math.abs(hi - lo);
  for (const t of niceTicks(lo, hi, opts.nticks || 5)) {
    if (t < lo - tol || t > hi + tol) continue;
    el("line", { x1: box.x + box.w, x2: box.x + box.w + 4, y1: sy(t), y2: sy(t), class: "tick" }, g);
    text(g, box.x + box.w + 6, sy(t) + 4, tickLabel(t, false), { class: "tick-label" });
  }
  if (opts.label) {
    const yl = text(g, 0, 0, opts.label, { class: "axis-label", "text-anchor": "middle" });
    yl.setAttribute("transform", `translate(${box.x + box.w + (opts.labelOffset || 44)},${box.y + box.h / 2}) rotate(-90)`);
  }
  return g;
}

// A heatmap of the matrix `values` filling box {x, y, w, h}: values[i][j] is the cell in row i
// (from the top) and column j. opts: cmap (default "cividis"); lo, hi (the values at the ends of
// the map; default the values' min and max: give the same range to heatmaps that are compared, and
// lo = −hi with "PuOr"); rows, cols (labels, top to bottom and left to right); slant (column labels
// slanted, for long ones); title, xlabel, ylabel, ylabelOffset (as in plot), xlabelOffset (below the
// box, default 32, 62 with slant). Returns plot()'s {sx, sy, g, box} (row i is at y = rows − 1 − i)
// with cell {w, h}, rowY(i) and colX(j): the top edge of row i and the left edge of column j.
function cmapGrid(svg, box, values, opts = {}) {
  const nr = values.length, nc = nr ? values[0].length : 0;
  let { lo, hi } = opts;
  if (lo === undefined || hi === undefined) {
    const finite = values.flat().filter((v) => v !== null && Number.isFinite(v));
    if (lo === undefined) lo = Math.min(...finite);
    if (hi === undefined) hi = Math.max(...finite);
  }
  const cmap = opts.cmap || "cividis", rows = opts.rows || [], cols = opts.cols || [];
  const p = plot(svg, box, {
    x: [-0.5, nc - 0.5], y: [-0.5, nr - 0.5], grid: false,
    xticks: opts.slant ? [] : cols.map((s, j) => [j, String(s)]),
    yticks: rows.map((s, i) => [nr - 1 - i, String(s)]),
    title: opts.title, ylabel: opts.ylabel, ylabelOffset: opts.ylabelOffset,
  });
  const cw = p.sx(1) - p.sx(0), ch = p.sy(0) - p.sy(1);
  const rowY = (i) => p.sy(nr - 1 - i + 0.5), colX = (j) => p.sx(j - 0.5);
  const span = hi - lo || 1;
  values.forEach((row, i) => row.forEach((v, j) => {
    el("rect", { x: colX(j), y: rowY(i), width: cw + 0.3, height: ch + 0.3, fill: cmapColor(cmap, (v - lo) / span) }, p.g);
  }));
  const bottom = p.box.y + p.box.h;
  if (opts.slant) {
    cols.forEach((s, j) => {
      const t = text(svg, 0, 0, String(s), { class: "tick-label", "text-anchor": "end" });
      t.setAttribute("transform", `translate(${p.sx(j) + 4},${bottom + 10}) rotate(-50)`);
    });
  }
  if (opts.xlabel) {
    text(svg, p.box.x + p.box.w / 2, bottom + (opts.xlabelOffset || (opts.slant ? 62 : 32)), opts.xlabel, { class: "axis-label", "text-anchor": "middle" });
  }
  return { ...p, cell: { w: cw, h: ch }, rowY, colX };
}

// ---------------------------------------------------------------------------------------------

const CONTROL_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown", " "]);

// The keyboard moves a control here, not through the browser's default action: notebook front
// ends take arrow keys as shortcuts, and Notebook 7 cancels them in the capture phase before the
// control sees them. A capture listener on window runs first of all; it is installed once.
if (!window.__ropeFigKeys) {
  window.__ropeFigKeys = true;
  window.addEventListener("keydown", (e) => {
    const input = e.target;
    if (!input || !input.ropeKeyStep || !CONTROL_KEYS.has(e.key) || e.altKey || e.ctrlKey || e.metaKey) return;
    e.stopPropagation();
    e.preventDefault();
    input.ropeKeyStep(e.key);
  }, { capture: true });
}

function keyStep(spec, input, key) {
  if (spec.kind === "range") {
    // a slider over listed values moves through their indices
    const min = spec.values ? 0 : Number(spec.min), step = spec.values ? 1 : Number(spec.step);
    const max = spec.values ? spec.values.length - 1 : Number(spec.max);
    const steps = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10 }[key];
    let v = key === "Home" ? min : key === "End" ? max : steps ? Number(input.value) + steps * step : null;
    if (v === null) return;
    v = Math.min(max, Math.max(min, min + Math.round((v - min) / step) * step));
    input.value = String(+v.toFixed(10));
    input.dispatchEvent(new Event("input", { bubbles: true }));
  } else if (spec.kind === "select") {
    const n = input.options.length;
    const d = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[key];
    const i = key === "Home" ? 0 : key === "End" ? n - 1 : d ? input.selectedIndex + d : null;
    if (i === null || i < 0 || i >= n) return;
    input.selectedIndex = i;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  } else if (key === " ") {
    input.checked = !input.checked;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }
}

// What a slider shows beside it: its value, or for a slider over an exponent (Control.shows "2^"
// or "10^") the number itself, rounded to a whole number and grouped in thousands ("4,096").
function sliderText(spec, v) {
  if (!spec.shows) return fmt(Number(v), spec.digits || 0);
  const x = Math.round(Math.pow(spec.shows === "2^" ? 2 : 10, Number(v)));
  return String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function buildControl(spec, model, uid) {
  const wrap = document.createElement("div");
  wrap.className = `rope-fig-control rope-fig-${spec.kind}`;
  const id = `${uid}-${spec.name}`;
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = tr(spec.label);
  let input, show;
  if (spec.kind === "range") {
    input = document.createElement("input");
    if (spec.values) Object.assign(input, { type: "range", id, min: 0, max: spec.values.length - 1, step: 1 });
    else Object.assign(input, { type: "range", id, min: spec.min, max: spec.max, step: spec.step });
    show = document.createElement("output");
    show.htmlFor = id;
    show.className = "rope-fig-value";
    input.addEventListener("input", () => {
      const raw = spec.values ? spec.values[Math.round(Number(input.value))] : Number(input.value);
      const v = spec.integer ? Math.round(raw) : raw;
      model.set(spec.name, v);
      model.save_changes();
    });
  } else if (spec.kind === "select") {
    input = document.createElement("select");
    input.id = id;
    for (const [i, opt] of spec.options.entries()) {
      const o = document.createElement("option");
      o.value = opt;
      o.textContent = tr(spec.labels ? spec.labels[i] : opt);
      input.appendChild(o);
    }
    input.addEventListener("change", () => { model.set(spec.name, input.value); model.save_changes(); });
  } else {
    input = document.createElement("input");
    Object.assign(input, { type: "checkbox", id });
    input.addEventListener("change", () => { model.set(spec.name, input.checked); model.save_changes(); });
  }
  input.dataset.control = spec.name;
  input.ropeKeyStep = (key) => keyStep(spec, input, key);
  input.addEventListener("keyup", (e) => { if (e.key === " ") e.preventDefault(); });  // no second toggle
  const sync = () => {
    const v = model.get(spec.name);
    if (spec.kind === "checkbox") input.checked = !!v;
    else if (spec.values) {   // the listed value nearest to the state's
      let best = 0;
      spec.values.forEach((x, i) => { if (Math.abs(x - v) < Math.abs(spec.values[best] - v)) best = i; });
      if (Number(input.value) !== best) input.value = String(best);
    } else if (String(input.value) !== String(v)) input.value = v;
    if (show) show.textContent = sliderText(spec, v);
  };
  if (spec.kind === "checkbox") wrap.append(input, label);
  else wrap.append(label, input);
  if (show) wrap.appendChild(show);
  sync();
  return { wrap, sync };
}

// --- layouts: the drawing fits the width it gets ---------------------------------------------
// Text in the drawing stays readable on a phone: the smallest font a figure draws with (tick
// labels, figures.css) is SMALLEST_FONT viewBox units, so a view of W units keeps its text at
// MIN_TEXT_PX or more in a box at least W * MIN_TEXT_PX / SMALLEST_FONT px wide.
//
// A figure declares its layouts, widest first: figure(draw, {layouts: [wide, ..., narrow]}) (or
// {width, height} for a single one). A layout is {width, height, ...}: the drawing's coordinates
// (fig.width, fig.height), plus any fields its draw reads from fig.layout (boxes, positions;
// `readoutsAbove: true` shows the readouts between the controls and the drawing). A
// layout with `tiles: [[x, y, w, h], ...]` is drawn in those coordinates and shown as its tiles
// (panels, legends) reflowed into rows at most `columnWidth` units wide (default: the widest
// tile), `gap` units apart: panels stack on a narrow screen. `layouts` may also be a function of
// the box's width in CSS px returning one layout.
// The engine shows the first layout whose view keeps the text at MIN_TEXT_PX in the figure's box,
// or the last one, and lays the figure out again whenever its box changes width (a ResizeObserver:
// a phone turned sideways, a notebook's side panel opened). Only when even the last layout is too
// wide (a column under about 330 px) does the drawing keep a minimum width and scroll sideways in
// its box (which then takes keyboard focus, so arrow keys scroll it).
const SMALLEST_FONT = 11;
const MIN_TEXT_PX = 10;
// Below this box width (CSS px) the host is marked rope-fig-narrow: controls grow to touch size.
const NARROW_PX = 600;

// The view of a layout: its size in viewBox units and, for a tiled layout, where each tile goes.
function layoutView(layout) {
  if (!layout.tiles) return { w: layout.width, h: layout.height, tiles: null };
  const gap = layout.gap ?? 8;
  const column = layout.columnWidth || Math.max(...layout.tiles.map((t) => t[2]));
  const rows = [];
  for (const t of layout.tiles) {
    const row = rows[rows.length - 1];
    if (row && row.w + gap + t[2] <= column + 1e-9) { row.items.push(t); row.w += gap + t[2]; row.h = Math.max(row.h, t[3]); }
    else rows.push({ items: [t], w: t[2], h: t[3] });
  }
  const placed = [];
  let y = 0;
  for (const row of rows) {
    let x = (column - row.w) / 2;  // a row narrower than the column is centred
    for (const t of row.items) { placed.push({ src: t, x, y }); x += t[2] + gap; }
    y += row.h + gap;
  }
  return { w: column, h: y - gap, tiles: placed };
}

// The layout for a box `avail` CSS px wide (0: not laid out yet, the widest).
function chooseLayout(layouts, avail) {
  if (typeof layouts === "function") return layouts(avail);
  if (!(avail > 0)) return layouts[0];
  return layouts.find((l) => (layoutView(l).w * MIN_TEXT_PX) / SMALLEST_FONT <= avail + 0.5) || layouts[layouts.length - 1];
}

// A line of text broken at spaces into lines of at most `chars` characters: [line, ...].
// Chinese (no spaces) breaks between any two CJK characters, each as wide as two Latin ones.
const CJK = /[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]/;
function wrapWords(str, chars) {
  str = String(str);
  if (!CJK.test(str)) {
    const lines = [];
    let cur = "";
    for (const word of str.split(" ")) {
      if (cur && cur.length + 1 + word.length > chars) { lines.push(cur); cur = word; }
      else cur = cur ? `${cur} ${word}` : word;
    }
    if (cur) lines.push(cur);
    return lines;
  }
  const width = (s) => [...s].reduce((n, c) => n + (CJK.test(c) ? 2 : 1), 0);
  const lines = [];
  let cur = "";
  for (const token of str.match(/[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef][，。：；、）》]?|\s+|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+/g) || []) {
    if (/^\s+$/.test(token)) { if (cur) cur += " "; continue; }
    if (cur.trim() && width(cur) + width(token) > chars) { lines.push(cur.trimEnd()); cur = token; }
    else cur += token;
  }
  if (cur.trim()) lines.push(cur.trimEnd());
  return lines;
}

// Text wrapped onto lines of at most `chars` characters, `lineHeight` apart from (x, y). Returns
// the <text> (one <tspan> a line); its lines are node.lines.
function textLines(parent, x, y, str, chars, attrs = {}, lineHeight = 15) {
  const node = el("text", { x, y, ...attrs }, parent);
  node.lines = wrapWords(MESSAGES && typeof str === "string" ? tr(str) : str, chars);
  node.lines.forEach((s, i) => {
    const span = el("tspan", { x, dy: i ? lineHeight : 0 }, node);
    span.textContent = s;
  });
  return node;
}

// Moves the top-level elements of `stage` (a drawn figure) into `targets`: definitions into
// targets[0] (a <defs>), every other element into the tile (targets[1 + i], showing tiles[i].src)
// its bounding box overlaps most, or out of the drawing if it overlaps none. Then removes `stage`.
function distribute(stage, tiles, targets) {
  // every box first (one layout of the drawing), then the moves (which would lay it out again)
  const where = [...stage.children].map((child) => {
    if (child.tagName === "defs") return [child, "defs"];
    let b = null;
    try { b = child.getBBox(); } catch (e) { b = null; }
    if (!b) return [child, -1];
    let x0 = b.x, y0 = b.y, x1 = b.x + b.width, y1 = b.y + b.height;
    const list = child.transform && child.transform.baseVal;
    if (list && list.numberOfItems) {  // the box in the drawing's coordinates (a rotated label)
      const m = list.consolidate().matrix;
      const xs = [], ys = [];
      for (const [x, y] of [[x0, y0], [x1, y0], [x0, y1], [x1, y1]]) { xs.push(m.a * x + m.c * y + m.e); ys.push(m.b * x + m.d * y + m.f); }
      [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    }
    let best = -1, bestArea = -1;
    tiles.forEach(({ src: [tx, ty, tw, th] }, i) => {
      const w = Math.min(x1, tx + tw) - Math.max(x0, tx), h = Math.min(y1, ty + th) - Math.max(y0, ty);
      if (w >= 0 && h >= 0 && w * h > bestArea) { best = i; bestArea = w * h; }
    });
    return [child, best];
  });
  for (const [child, best] of where) {
    if (best === "defs") targets[0].append(...child.children);
    else if (best >= 0) { targets[1 + best].appendChild(child); continue; }
    child.remove();
  }
  stage.remove();
}

function drawingBox(title) {
  const box = document.createElement("div");
  box.className = "rope-fig-canvas";
  const update = () => {
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls && !box.hasAttribute("tabindex")) {
      box.tabIndex = 0;
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", tr(`${title || "figure"}: drawing, scrolls sideways`));
    } else if (!scrolls && box.hasAttribute("tabindex")) {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  };
  return { box, update };
}

function figure(draw, { width = 640, height = 400, layouts = null } = {}) {
  const LAYOUTS = layouts || [{ width, height }];
  function render({ model, el: host }) {
    const specs = model.get("_controls") || [];
    const data = model.get("_data") || {};
    const defaults = model.get("_defaults") || {};
    const uid = uniqueId("rope-fig");
    host.classList.add("rope-fig");
    host.dataset.figure = model.get("_name") || "";
    const messages = compileMessages(model.get("_messages"));
    MESSAGES = messages;
    const title = tr(model.get("_title") || "");
    if (title) { host.setAttribute("role", "figure"); host.setAttribute("aria-label", title); }
    host.replaceChildren();
    const controlBox = document.createElement("div");
    controlBox.className = "rope-fig-controls";
    controlBox.setAttribute("data-lm-suppress-shortcuts", "true");  // no Lumino shortcuts here
    const controls = specs.map((s) => buildControl(s, model, uid));
    controls.forEach((c) => controlBox.appendChild(c.wrap));
    const heading = document.createElement("p");
    heading.className = "rope-fig-heading";
    heading.hidden = true;
    const svg = el("svg", { class: "rope-fig-svg", role: "img", preserveAspectRatio: "xMidYMid meet" });
    const canvas = drawingBox(title);
    canvas.box.appendChild(svg);
    const readoutBox = document.createElement("div");
    readoutBox.className = "rope-fig-readouts";
    readoutBox.setAttribute("aria-live", "polite");
    const notes = document.createElement("p");
    notes.className = "rope-fig-notes";
    host.append(controlBox, heading, canvas.box, readoutBox, notes);
    const readouts = new Map();
    let draws = 0;
    // the current layout, its view, and what the figure draws into: the <svg>, or for a tiled
    // layout one nested <svg> per tile, whose viewBox shows its part of the drawing
    let layout = null, view = null, targets = [svg], laidOutAt = -1;

    const applyLayout = (next) => {
      layout = next;
      view = layoutView(layout);
      svg.setAttribute("viewBox", `0 0 ${view.w} ${view.h}`);
      svg.replaceChildren();
      targets = view.tiles
        ? [el("defs", {}, svg), ...view.tiles.map(({ src: [x, y, w, h], x: tx, y: ty }) =>
          el("svg", { class: "rope-fig-tile", x: tx, y: ty, width: w, height: h, viewBox: `${x} ${y} ${w} ${h}`, overflow: "hidden" }, svg))]
        : [svg];
      // readoutsAbove: the numbers between the controls and the drawing (a tall figure on a
      // phone: the reader sees what a control changes without scrolling away from it)
      host.classList.toggle("rope-fig-readouts-above", !!layout.readoutsAbove);
      host.dataset.layout = String(Array.isArray(LAYOUTS) ? LAYOUTS.indexOf(layout) : layout.name || "");
      host.dataset.view = `${view.w}x${view.h}`;
    };
    // Lays the figure out for its box's width; true when the layout changed.
    const fit = () => {
      const avail = host.clientWidth;
      if (avail === laidOutAt && layout) return false;
      laidOutAt = avail;
      host.classList.toggle("rope-fig-narrow", avail > 0 && avail < NARROW_PX);
      const next = chooseLayout(LAYOUTS, avail);
      const changed = !layout || (typeof LAYOUTS === "function" ? JSON.stringify(next) !== JSON.stringify(layout) : next !== layout);
      if (changed) applyLayout(next);
      const tooWide = avail > 0 && (view.w * MIN_TEXT_PX) / SMALLEST_FONT > avail + 0.5;
      svg.style.minWidth = tooWide ? `${Math.ceil((view.w * MIN_TEXT_PX) / SMALLEST_FONT) + 1}px` : "";
      return changed;
    };

    const current = () => Object.fromEntries(specs.map((s) => [s.name, model.get(s.name)]));
    // A tiled layout draws the figure once, then moves each top-level element of the drawing into
    // the tile it overlaps most (its definitions: clip paths, gradients, into a <defs> all tiles
    // share); an element in no tile is left out. Each tile's viewBox shows its part.
    const redraw = () => {
      MESSAGES = messages;
      const state = current();
      const seen = new Set();
      let noteText = "", headingText = "";
      targets.forEach((target) => target.replaceChildren());
      const stage = view.tiles ? el("g", { class: "rope-fig-stage" }, svg) : svg;
      const fig = {
        state, data, svg: stage, width: layout.width, height: layout.height, layout, tiled: !!view.tiles, model,
        readout(name, label, value, digits = 3, unit = "", { zero = 0 } = {}) {
          value = snapZero(value, zero);
          seen.add(name);
          let r = readouts.get(name);
          if (!r) {
            r = document.createElement("span");
            r.className = "rope-fig-readout";
            r.innerHTML = '<span class="rope-fig-readout-label"></span> <output></output>';
            r.dataset.readout = name;
            readoutBox.appendChild(r);
            readouts.set(name, r);
          }
          r.firstChild.textContent = `${tr(label)} =`;
          // a degree sign follows its number with no space (92°); other units after a space (0.48 rad)
          r.lastChild.textContent = `${fmt(value, digits)}${unit ? (unit === "°" ? "" : " ") + tr(unit) : ""}`;
          r.dataset.value = String(value);
          r.hidden = false;
        },
        note(str) { noteText += (noteText ? " " : "") + tr(str); },
        // The figure's heading: centred at the top of the drawing (y: its baseline; attrs: e.g.
        // a class, or x to centre it elsewhere); above the drawing, as text that wraps, in a
        // tiled layout (whose tiles leave it out) or one with headingAbove: true.
        heading(str, y = 18, attrs = {}) {
          str = tr(str);
          if (view.tiles || layout.headingAbove) headingText += (headingText ? "\n" : "") + str;
          else text(stage, attrs.x ?? layout.width / 2, y, str, { class: "plot-title", "text-anchor": "middle", ...attrs });
        },
      };
      draw(fig);
      if (view.tiles) distribute(stage, view.tiles, targets);
      for (const [name, r] of readouts) if (!seen.has(name)) r.hidden = true;
      notes.textContent = noteText;
      notes.hidden = !noteText;
      heading.textContent = headingText;
      heading.hidden = !headingText;
      svg.setAttribute("aria-label", host.getAttribute("aria-label") || tr("interactive figure"));
      host.dataset.state = JSON.stringify(state);
      host.dataset.draws = String(++draws);
    };
    const onChange = () => {
      controls.forEach((c) => c.sync());
      redraw();
    };
    for (const s of specs) model.on(`change:${s.name}`, onChange);
    // A printed page shows the figure in its default state.
    let saved = null;
    const beforePrint = () => {
      saved = current();
      for (const s of specs) if (s.name in defaults) model.set(s.name, defaults[s.name]);
      onChange();
    };
    const afterPrint = () => {
      if (!saved) return;
      for (const [k, v] of Object.entries(saved)) model.set(k, v);
      saved = null;
      onChange();
    };
    window.addEventListener("beforeprint", beforePrint);
    window.addEventListener("afterprint", afterPrint);
    fit();
    redraw();
    // Lay out again when the box changes width (not yet attached: 0, then its real width).
    let observer = null;
    if (typeof ResizeObserver !== "undefined") {
      observer = new ResizeObserver(() => {
        if (fit()) redraw();
        canvas.update();
      });
      observer.observe(host);
    }
    return () => {
      for (const s of specs) model.off(`change:${s.name}`, onChange);
      window.removeEventListener("beforeprint", beforePrint);
      window.removeEventListener("afterprint", afterPrint);
      if (observer) observer.disconnect();
    };
  }
  return { render };
}

// The engine's public names: what a figure imports in the static book (and the loader, the
// "Check your model" page and the tests use). Keep it one statement; add a name a figure needs.
export {
  figure, el, text, textLines, wrapWords, fmt, tickLabel, plot, line, arrow, legend, subscript, snapZero,
  cmapColor, cmapBar, cmapGrid, uniqueId, compileMessages, tr, layoutView, chooseLayout, sliderText,
};
