// Chapter 8: RoPE angles m·θ_i computed in float32, bfloat16 or float16, against float64.
// Top: every pair's angle error (wrapped to [0, π]); bottom: how far a fixed unit vector x moves
// when it is rotated with those angles, and the error of cos/sin stored in the chosen dtype.
//
// The numbers come from rope_edu.widgets.precision.data(), computed with torch: each pair's
// frequency as torch rounds it to each dtype, and each format's significant bits. Here only the
// rounding of the position and of the product is redone, bit for bit as torch does it on the CPU
// (a double goes to float32 first, then to nearest-even on the format's bits; the product of two
// bfloat16 or float16 numbers is exact in float32, so rounding it once is torch's product).

const TWO_PI = 2 * Math.PI;

// x rounded to the format {bits, max, tiny} as torch's .to(dtype) rounds a float64 (via float32).
function roundTo(x, format) {
  const v = Math.fround(x);
  if (format.bits >= 24 || v === 0 || !Number.isFinite(v)) return v;
  const a = Math.abs(v);
  let e = Math.floor(Math.log2(a));
  if (Math.pow(2, e) > a) e -= 1;
  else if (Math.pow(2, e + 1) <= a) e += 1;
  const ulp = Math.pow(2, Math.max(e, Math.round(Math.log2(format.tiny))) - format.bits + 1);
  const q = a / ulp, f = Math.floor(q), r = q - f;  // exact: ulp is a power of two
  const n = r > 0.5 ? f + 1 : r < 0.5 ? f : f % 2 === 0 ? f : f + 1;  // ties to even
  const out = n * ulp;
  return Math.sign(v) * (out > format.max ? Infinity : out);
}

// |delta| reduced modulo 2π to [0, π], as numpy does it (floored modulo); NaN if not finite.
function wrap(delta) {
  if (!Number.isFinite(delta)) return NaN;
  let r = (delta + Math.PI) % TWO_PI;
  if (r < 0) r += TWO_PI;
  return Math.abs(r - Math.PI);
}

// Everything the figure shows for one state: the counterpart of precision.state / readouts.
function compute(state, data) {
  const { position, dtype } = state;
  const { theta, theta_in: thetaIn, formats, pair_weight: weight } = data;
  const fmtLow = formats[dtype], fmt32 = formats.float32;
  const mLow = roundTo(position, fmtLow), m32 = roundTo(position, fmt32);
  const n = theta.length;
  const err = new Array(n), err32 = new Array(n);
  let drift = 0, drift32 = 0, storage = 0, total = 0, finite = true, maxErr = 0, maxErr32 = 0;
  for (let i = 0; i < n; i++) {
    const exact = position * theta[i];
    const low = roundTo(mLow * thetaIn[dtype][i], fmtLow);
    const a32 = Math.fround(m32 * thetaIn.float32[i]);
    err[i] = wrap(low - exact);
    err32[i] = wrap(a32 - exact);
    if (!Number.isFinite(low)) finite = false;
    maxErr = Math.max(maxErr, err[i]);
    maxErr32 = Math.max(maxErr32, err32[i]);
    // |e^{ia} − e^{ib}| = 2 |sin((a − b)/2)|, weighted by the squared length of pair i of x
    const s = Math.sin((low - exact) / 2), s32 = Math.sin((a32 - exact) / 2);
    drift += 4 * weight[i] * s * s;
    drift32 += 4 * weight[i] * s32 * s32;
    total += weight[i];
    const c = Math.abs(roundTo(Math.cos(a32), fmtLow) - Math.cos(exact));
    const si = Math.abs(roundTo(Math.sin(a32), fmtLow) - Math.sin(exact));
    storage = Math.max(storage, c, si);
  }
  return {
    err, err32,
    readouts: {
      stored_position: mLow,
      max_angle_error: finite ? maxErr : NaN,
      max_angle_error_f32: maxErr32,
      drift: finite ? Math.sqrt(drift / total) : NaN,
      drift_f32: Math.sqrt(drift32 / total),
      cos_storage_error: storage,
    },
  };
}

const LOG_TICKS = [1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1].map((t) => [t, t === 1 ? "1" : `10${sup(Math.log10(t))}`]);

function sup(k) {
  const digits = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };
  return String(k).split("").map((c) => digits[c]).join("");
}

function grouped(v) {  // 100000 -> "100 000"
  return Number.isFinite(v) ? String(v).replace(/\B(?=(\d{3})+(?!\d))/g, " ") : "∞";
}

// A box to type an exact position (the slider moves 1 per arrow key over 0 .. 100 000).
function positionBox(fig) {
  const host = fig.svg.parentNode;
  if (!host || host.querySelector(".rope-fig-exact")) return;
  const slider = host.querySelector('input[data-control="position"]');
  if (!slider) return;
  const box = document.createElement("input");
  Object.assign(box, { type: "number", min: slider.min, max: slider.max, step: 1, className: "rope-fig-exact" });
  box.setAttribute("aria-label", "position m, exact value (type and press Enter)");
  box.style.width = "6.5em";
  box.style.font = "inherit";
  box.addEventListener("change", () => {
    const v = Math.round(Number(box.value));
    if (!Number.isFinite(v)) return;
    fig.model.set("position", Math.min(Number(slider.max), Math.max(Number(slider.min), v)));
    fig.model.save_changes();
  });
  slider.parentNode.appendChild(box);
}

function draw(fig) {
  positionBox(fig);
  const { position, dtype } = fig.state;
  const exactBox = fig.svg.parentNode && fig.svg.parentNode.querySelector(".rope-fig-exact");
  if (exactBox && exactBox.value !== String(position)) exactBox.value = String(position);
  const floor = fig.data.floor;
  const { err, err32, readouts: r } = compute(fig.state, fig.data);
  const low = dtype !== "float32";
  const cLow = COLORS.k, c32 = COLORS.q;

  // --- top: angle error of every pair ---
  const n = err.length;
  const L = fig.layout;
  const top = plot(fig.svg, L.top, {
    x: [-1.5, n + 0.5], y: [floor / 2, 30], ylog: true, yticks: LOG_TICKS,
    xticks: [0, 16, 32, 48, n - 1],
    xlabel: "pair index i (frequency θᵢ falls as i grows)", ylabel: "|angle error| (rad)", ylabelOffset: 52,
  });
  const stored = Number.isFinite(r.stored_position) ? `stored as ${grouped(r.stored_position)}` : "overflows to ∞";
  const title = `position m = ${grouped(position)} in ${dtype}: ${stored}`;
  if (fig.tiled) fig.heading(title);
  else text(fig.svg, 78 + 210, 22, title, { class: "plot-title", "text-anchor": "middle" });
  const piY = top.sy(Math.PI);
  el("line", { x1: top.box.x, x2: top.box.x + top.box.w, y1: piY, y2: piY, stroke: COLORS.grey, "stroke-dasharray": "2 3" }, top.g);
  text(top.g, top.box.x + top.box.w - 4, piY - 5, "π: the pair points anywhere", { class: "legend-label", fill: COLORS.grey, "text-anchor": "end" });
  const series = (values, color, square) => {
    line(top, values.map((v, i) => [i, Number.isFinite(v) ? Math.max(v, floor) : null]), { stroke: color, "stroke-width": 1.2, opacity: 0.7 });
    values.forEach((v, i) => {
      if (!Number.isFinite(v)) return;
      const X = top.sx(i), Y = top.sy(Math.max(v, floor)), zero = v < floor;
      const attrs = { fill: zero ? "#fff" : color, stroke: color, "stroke-width": 1.2 };
      if (square) el("rect", { x: X - 2.6, y: Y - 2.6, width: 5.2, height: 5.2, ...attrs }, top.g);
      else el("circle", { cx: X, cy: Y, r: 3, ...attrs }, top.g);
    });
  };
  series(err32, c32, true);
  if (low) series(err, cLow, false);
  if (low && !Number.isFinite(r.max_angle_error)) {
    text(top.g, top.sx(n / 2), top.sy(0.25), `${dtype} angles are ∞: cos and sin are NaN`, { fill: cLow, "text-anchor": "middle", class: "legend-label" });
  }
  const items = [];
  if (low) items.push([`angles in ${dtype}`, cLow]);
  items.push(["angles in float32", c32]);
  legend(fig.svg, 516, 52, items);
  text(fig.svg, 516, 52 + 16 * items.length + 8, "hollow marker: exact (0),", { class: "legend-label", fill: COLORS.grey });
  text(fig.svg, 516, 52 + 16 * items.length + 23, `drawn at 10${sup(Math.log10(floor))}`, { class: "legend-label", fill: COLORS.grey });
  text(fig.svg, 516, 52 + 16 * items.length + 50, "Try 256 vs 257 in bfloat16,", { class: "legend-label" });
  text(fig.svg, 516, 52 + 16 * items.length + 65, "2048 vs 2049 and 65 519 vs", { class: "legend-label" });
  text(fig.svg, 516, 52 + 16 * items.length + 80, "65 520 in float16, 100 000", { class: "legend-label" });
  text(fig.svg, 516, 52 + 16 * items.length + 95, "in float32.", { class: "legend-label" });

  // --- bottom: drift of the rotated vector, and the cos/sin storage error ---
  const rows = [];
  if (low) rows.push([[`angles in ${dtype}`], r.drift, cLow]);
  rows.push([["angles in float32"], r.drift_f32, c32]);
  rows.push([["float32 angles, cos/sin", `then stored in ${dtype}`], r.cos_storage_error, COLORS.v]);
  // its rows' labels left of the bars, or (narrow) above them
  const { x: bx, y: by, w: bw, rowH, above } = L.bottom, bh = 3 * rowH;
  const bottom = plot(fig.svg, { x: bx, y: by, w: bw, h: bh }, {
    x: [floor / 2, 10], y: [0, 3], xlog: true, xticks: LOG_TICKS, yticks: [],
    xlabel: "‖R̃ₘx − Rₘx‖ / ‖x‖  (last bar: largest |cos/sin error|)",
  });
  rows.forEach(([label, value, color], j) => {
    const yc = by + (j + 0.5) * rowH + (above ? 7 : 0), shown = Number.isFinite(value) ? fmt(value, value < 0.01 ? 2 : 3) : "∞ angles: NaN";
    if (above) text(fig.svg, bx + 4, yc - 13, `${label.join(" ")}: ${shown}`, { class: "legend-label" });
    else label.forEach((line_, k) => text(fig.svg, bx - 8, yc + 4 + (k - (label.length - 1) / 2) * 14, line_, { class: "legend-label", "text-anchor": "end" }));
    if (Number.isFinite(value)) {
      const x1 = bottom.sx(Math.max(value, floor));
      el("rect", { x: bx, y: yc - (above ? 6 : 9), width: Math.max(x1 - bx, 1), height: above ? 12 : 18, fill: color, opacity: 0.85 }, bottom.g);
    }
    if (!above) text(fig.svg, bx + bw + 8, yc + 4, shown, { class: "legend-label" });
  });
  text(fig.svg, 20, by - 10, `drift of the rotated unit vector x (d = ${2 * n})`, { class: "plot-title" });

  // --- readouts (their Python counterpart: precision.readouts) ---
  const d = (v) => (Math.abs(v) < 0.01 ? 2 : 3);
  fig.readout("stored_position", `m stored in ${dtype}`, r.stored_position, 0);
  fig.readout("max_angle_error", `largest angle error, ${dtype}`, r.max_angle_error, d(r.max_angle_error), "rad");
  if (low) fig.readout("max_angle_error_f32", "largest angle error, float32", r.max_angle_error_f32, d(r.max_angle_error_f32), "rad");
  fig.readout("drift", `drift, angles in ${dtype}`, r.drift, d(r.drift));
  if (low) fig.readout("drift_f32", "drift, angles in float32", r.drift_f32, d(r.drift_f32));
  fig.readout("cos_storage_error", `cos/sin error, float32 angles stored in ${dtype}`, r.cos_storage_error, d(r.cos_storage_error));
}

// Wide: the legend right of the top plot, the bars' labels left of them. Narrow: narrower plots,
// the legend under the top one (tiles), each bar's label and value above it, the title above.
const FIGURE = figure(draw, { layouts: [
  { width: 720, height: 480, top: { x: 78, y: 36, w: 420, h: 240 }, bottom: { x: 236, y: 338, w: 380, rowH: 30 } },
  { width: 720, height: 540, top: { x: 78, y: 36, w: 270, h: 240 }, bottom: { x: 24, y: 338, w: 320, rowH: 44, above: true },
    tiles: [[0, 28, 360, 288], [508, 40, 212, 190], [0, 314, 360, 226]] },
] });
export default FIGURE;
export { compute, roundTo };
