// Chapter 2: the shift matrix M(k) turns every pair of PE(p) clockwise by k·θ_i onto PE(p + k).
// Pair i, (sin pθ_i, cos pθ_i), is a point on a circle: coordinate 2i across, 2i+1 up, so
// p = 0 sits at 12 o'clock. The figure applies the 2×2 blocks of rope_edu's shift_matrix(k)
// to PE(p) (filled dot) and marks PE(p + k) from the formula (cross): they coincide, after the
// same turn kθ_i whatever p is. The error readout is rope_edu's, precomputed for every (p, k).

// A turn by `span` radians (clockwise when span > 0) from math angle a0 around (cx, cy), drawn
// as a slowly tightening spiral so that a turn of more than a full circle stays readable, with
// an arrowhead along the tangent at its end.
function turnArc(parent, cx, cy, r, a0, span, color) {
  const steps = Math.max(8, Math.ceil(Math.abs(span) * 24)), pts = [];
  const shrink = (0.14 * r) / (2 * Math.PI);  // the radius drops by 14% per full turn
  const at = (t) => { const rr = r - shrink * Math.abs(t), a = a0 - t; return [cx + rr * Math.cos(a), cy - rr * Math.sin(a)]; };
  for (let i = 0; i <= steps; i++) {
    const [x, y] = at((span * i) / steps);
    pts.push(`${i ? "L" : "M"}${x.toFixed(2)},${y.toFixed(2)}`);
  }
  el("path", { d: pts.join(""), fill: "none", stroke: color, "stroke-width": 3 }, parent);
  const [x1, y1] = at(span), [x0, y0] = at(span - Math.sign(span) * 1e-3);
  const len = Math.hypot(x1 - x0, y1 - y0);
  if (len === 0 || Math.abs(span) * r < 6) return;  // too short for a head
  const ux = (x1 - x0) / len, uy = (y1 - y0) / len, h = 9, w = 5;
  const tx = x1 + ux * 3, ty = y1 + uy * 3;  // tip just past the end of the path
  el("polygon", { points: `${tx},${ty} ${tx - ux * h - uy * w},${ty - uy * h + ux * w} ${tx - ux * h + uy * w},${ty - uy * h - ux * w}`, fill: color }, parent);
}

function draw(fig) {
  const { p, k } = fig.state;
  const { theta, pe, blocks, error, k_min: kMin } = fig.data;
  const svg = fig.svg, nPairs = theta.length, R = 58, cy = 150;
  const peP = pe[p - kMin], pePk = pe[p + k - kMin], M = blocks[k - kMin];
  fig.heading(`p = ${fmt(p, 0)}, k = ${fmt(k, 0)}: each pair turns ${k >= 0 ? "clockwise" : "counter-clockwise"} by ${k >= 0 ? "" : "−"}kθᵢ`, 20);

  const turns = [];
  for (let i = 0; i < nPairs; i++) {
    const cx = 98 + 162 * i;
    const a = peP[2 * i], b = peP[2 * i + 1];
    const [[m00, m01], [m10, m11]] = M[i];
    const sh = [m00 * a + m01 * b, m10 * a + m11 * b];  // M(k) PE(p), pair i
    const turn = k * theta[i];
    turns.push(turn);
    // the pair's plane: coordinate 2i across, 2i+1 up
    el("line", { x1: cx - R - 8, x2: cx + R + 8, y1: cy, y2: cy, class: "grid" }, svg);
    el("line", { x1: cx, x2: cx, y1: cy - R - 8, y2: cy + R + 8, class: "grid" }, svg);
    text(svg, cx + R + 10, cy + 4, `x${2 * i}`, { class: "tick-label" });
    text(svg, cx + 4, cy - R - 10, `x${2 * i + 1}`, { class: "tick-label" });
    el("circle", { cx, cy, r: R, fill: "none", stroke: COLORS.grey, "stroke-width": 1 }, svg);
    el("line", { x1: cx, x2: cx, y1: cy, y2: cy - R, stroke: COLORS.grey, "stroke-dasharray": "2 3" }, svg);  // p = 0
    text(svg, cx, 48, `pair ${i}`, { class: "legend-label", "text-anchor": "middle" });
    text(svg, cx, 64, `θ${subscript(i)} = ${fmt(theta[i], 3)} rad/position`, { class: "tick-label", "text-anchor": "middle" });
    // radii to PE(p) and to M(k)·PE(p): the turn is the angle between them
    el("line", { x1: cx, y1: cy, x2: cx + R * a, y2: cy - R * b, stroke: COLORS.q, "stroke-width": 1.2, opacity: 0.7 }, svg);
    el("line", { x1: cx, y1: cy, x2: cx + R * sh[0], y2: cy - R * sh[1], stroke: COLORS.k, "stroke-width": 1.2, opacity: 0.7 }, svg);
    if (Math.abs(turn) > 1e-12) turnArc(svg, cx, cy, 0.62 * R, Math.atan2(b, a), turn, COLORS.orange);
    el("circle", { cx: cx + R * a, cy: cy - R * b, r: 7, fill: "#fff", stroke: COLORS.q, "stroke-width": 2.5 }, svg);
    el("circle", { cx: cx + R * sh[0], cy: cy - R * sh[1], r: 4, fill: COLORS.k }, svg);
    const X = cx + R * pePk[2 * i], Y = cy - R * pePk[2 * i + 1], c = 6;
    el("path", { d: `M${X - c},${Y - c}L${X + c},${Y + c}M${X - c},${Y + c}L${X + c},${Y - c}`, stroke: COLORS.black, "stroke-width": 1.8 }, svg);
    text(svg, cx, cy + R + 30, `kθ${subscript(i)} = ${fmt(turn, 2)} rad`, { class: "legend-label", "text-anchor": "middle" });
  }

  // Legend.
  const ly = 272;
  el("circle", { cx: 30, cy: ly, r: 7, fill: "#fff", stroke: COLORS.q, "stroke-width": 2.5 }, svg);
  text(svg, 44, ly + 4, "PE(p)", { class: "legend-label" });
  el("circle", { cx: 110, cy: ly, r: 4, fill: COLORS.k }, svg);
  text(svg, 122, ly + 4, "M(k)·PE(p)", { class: "legend-label" });
  el("path", { d: `M${218},${ly - 6}L${230},${ly + 6}M${218},${ly + 6}L${230},${ly - 6}`, stroke: COLORS.black, "stroke-width": 1.8 }, svg);
  text(svg, 238, ly + 4, "PE(p + k), from the formula", { class: "legend-label" });
  el("line", { x1: 430, x2: 452, y1: ly, y2: ly, stroke: COLORS.orange, "stroke-width": 3 }, svg);
  text(svg, 458, ly + 4, "the turn by kθᵢ (clockwise if k > 0)", { class: "legend-label" });
  textLines(svg, 20, ly + 30, "Pair i is drawn with coordinate 2i (sin pθᵢ) across and 2i+1 (cos pθᵢ) up: p = 0 is at 12 o'clock (dotted).",
    fig.layout.noteChars, { class: "legend-label" });

  fig.readout("pk", "p + k", p + k, 0);
  turns.forEach((t, i) => fig.readout(`turn_${i}`, `kθ${subscript(i)}`, t, 2, "rad"));
  fig.readout("error", "max |M(k)·PE(p) − PE(p+k)|", error[p][k - kMin], 1);
}

// Wide: four pairs in a row. Narrow: the same drawing in tiles, two pairs a row, the legend's
// entries one under the other, its last line wrapped; the heading above.
export default figure(draw, { layouts: [
  { width: 680, height: 312, noteChars: 200 },
  { width: 680, height: 345, noteChars: 52,
    tiles: [[0, 30, 340, 214], [340, 30, 340, 214], [20, 262, 192, 18], [212, 262, 200, 18], [426, 262, 270, 18], [12, 290, 340, 50]] },
] });
