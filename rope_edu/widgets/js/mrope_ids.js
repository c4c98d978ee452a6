// Chapter 11: M-RoPE position ids of a text + image + video sequence. Every token gets three ids
// (time t, height h, width w), computed by rope_edu.multidim.mrope_position_ids in Python for every
// state of the controls; this module looks the state up, prints the readouts and draws the ids
// against the token's index in the sequence. Text tokens have t = h = w.

const KINDS = ["text", "image", "video"];

function compute({ family, rows, cols, frames, seconds }, { layouts, seconds_matter }) {
  const sec = seconds_matter.includes(family) ? seconds : "1";
  const { ids, type } = layouts[`${family}|${rows}|${cols}|${frames}|${sec}`];
  const n = type.length;
  let max = -Infinity;
  for (const row of ids) for (const v of row) max = Math.max(max, v);
  const firstAfter = (kind) => {
    let last = -1;
    for (let i = 0; i < n; i++) if (type[i] === kind) last = i;
    return ids[0][last + 1];
  };
  let tmin = Infinity, tmax = -Infinity;
  for (let i = 0; i < n; i++) if (type[i] === 2) { tmin = Math.min(tmin, ids[0][i]); tmax = Math.max(tmax, ids[0][i]); }
  return {
    ids, type,
    n_tokens: n,
    max_id: max,
    rope_delta: max + 1 - n,
    after_image: firstAfter(1),
    after_video: firstAfter(2),
    video_time_span: tmax - tmin,
  };
}

const SERIES = [["t (time)", 0, "circle"], ["h (row)", 1, "square"], ["w (column)", 2, "triangle"]];
const SERIES_COLORS = () => [COLORS.v, COLORS.orange, COLORS.accent];
const KIND_FILL = { 0: "#e6e6e6", 1: "#cfe8f7", 2: "#fbeeb0" };

function marker(g, shape, x, y, color) {
  if (shape === "circle") return el("circle", { cx: x, cy: y, r: 4, fill: color }, g);
  if (shape === "square") return el("rect", { x: x - 3.5, y: y - 3.5, width: 7, height: 7, fill: "none", stroke: color, "stroke-width": 2 }, g);
  return el("polygon", { points: `${x},${y - 5} ${x - 4.5},${y + 3.5} ${x + 4.5},${y + 3.5}`, fill: "none", stroke: color, "stroke-width": 1.6 }, g);
}

function draw(fig) {
  const r = compute(fig.state, fig.data);
  const n = r.n_tokens, colors = SERIES_COLORS();
  const box = fig.layout.box;
  const p = plot(fig.svg, box, {
    x: [-0.5, n - 0.5], y: [-1, r.max_id + 1],
    xlabel: "token index in the sequence", ylabel: "position id", nticks: 8,
  });
  // the modality strip above the plot: one cell per token
  const cw = (p.sx(1) - p.sx(0));
  for (let i = 0; i < n; i++) {
    el("rect", { x: p.sx(i) - cw / 2, y: 30, width: Math.max(cw - 1, 1), height: 16, fill: KIND_FILL[r.type[i]],
      stroke: "#999", "stroke-width": 0.5 }, fig.svg);
    el("rect", { x: p.sx(i) - cw / 2, y: box.y, width: Math.max(cw, 1), height: box.h, fill: KIND_FILL[r.type[i]], opacity: 0.35 }, p.g);
  }
  text(fig.svg, box.x, 24, "text", { class: "legend-label" });
  el("rect", { x: box.x + 30, y: 14, width: 12, height: 12, fill: KIND_FILL[0], stroke: "#999" }, fig.svg);
  text(fig.svg, box.x + 52, 24, "image", { class: "legend-label" });
  el("rect", { x: box.x + 92, y: 14, width: 12, height: 12, fill: KIND_FILL[1], stroke: "#999" }, fig.svg);
  text(fig.svg, box.x + 114, 24, "video", { class: "legend-label" });
  el("rect", { x: box.x + 152, y: 14, width: 12, height: 12, fill: KIND_FILL[2], stroke: "#999" }, fig.svg);
  // the diagonal a 1-D position would follow
  line(p, [[0, 0], [n - 1, n - 1]], { stroke: COLORS.grey, "stroke-dasharray": "4 4", "stroke-width": 1 });
  SERIES.forEach(([, axis, shape], j) => {
    for (let i = 0; i < n; i++) marker(p.g, shape, p.sx(i), p.sy(r.ids[axis][i]), colors[j]);
  });
  const lx = fig.layout.legendX;
  SERIES.forEach(([label, , shape], j) => {
    marker(fig.svg, shape, lx + 6, 70 + 18 * j, colors[j]);
    text(fig.svg, lx + 16, 74 + 18 * j, label, { class: "legend-label" });
  });
  legend(fig.svg, lx, 128, [["1-D position", COLORS.grey, true]]);
  const { rows, cols, frames, seconds, family } = fig.state;
  text(fig.svg, lx, 170, `image ${rows} × ${cols}`, { class: "legend-label" });
  text(fig.svg, lx, 186, `video ${frames} × 2 × 2`, { class: "legend-label" });
  text(fig.svg, lx, 202, `${seconds} s per patch`, { class: "legend-label" });
  if (!fig.data.seconds_matter.includes(family)) text(fig.svg, lx, 218, "(unused here)", { class: "legend-label" });

  fig.readout("n_tokens", "tokens", r.n_tokens, 0);
  fig.readout("max_id", "largest id", r.max_id, 0);
  fig.readout("rope_delta", "rope_delta (largest id + 1 − tokens)", r.rope_delta, 0);
  fig.readout("after_image", "first text id after the image", r.after_image, 0);
  fig.readout("after_video", "first text id after the video", r.after_video, 0);
  fig.readout("video_time_span", "time-id span of the video", r.video_time_span, 0);
  if (!fig.data.seconds_matter.includes(fig.state.family)) fig.note("Seconds per patch changes nothing here: only Qwen2.5-VL ties time ids to seconds.");
}

export { compute };
// Wide: the legend right of the plot. Narrow: a narrower plot, the legend under it (tiles).
export default figure(draw, { layouts: [
  { width: 720, height: 400, box: { x: 60, y: 56, w: 520, h: 300 }, legendX: 592 },
  { width: 720, height: 400, box: { x: 52, y: 56, w: 296, h: 296 }, legendX: 420, tiles: [[0, 8, 360, 392], [410, 56, 170, 172]] },
] });
