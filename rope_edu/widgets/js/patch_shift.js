// Chapter 11: 2-D RoPE on an image grid. The query patch sits at (qr + sr, qc + sc), the key patch at
// (kr + sr, kc + sc). Pair i of a vector at patch p = (row, column) turns by θ_i · p, where θ_i is the
// pair's frequency vector (axial: one non-zero entry; mixed: a diagonal direction). Every patch is
// coloured by the score the query would give a key there; the shift (sr, sc) moves the whole pattern
// with the query, and the score of the chosen pair of patches does not change.

function rotateAt(v, freqs, r, c) {
  const out = new Array(v.length);
  for (let i = 0; i < v.length / 2; i++) {
    const a = freqs[i][0] * r + freqs[i][1] * c;
    const co = Math.cos(a), si = Math.sin(a);
    out[2 * i] = v[2 * i] * co - v[2 * i + 1] * si;
    out[2 * i + 1] = v[2 * i] * si + v[2 * i + 1] * co;
  }
  return out;
}

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function mixColor(hex, t) {  // white (t = 0) to hex (t = 1)
  const n = parseInt(hex.slice(1), 16);
  const ch = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => Math.round(255 + (v - 255) * t));
  return `rgb(${ch.join(",")})`;
}

// Everything the figure shows for a state: the offset, the three scores, and the grid of scores.
function compute({ qr, qc, kr, kc, sr, sc, scheme }, { grid, q, k, freqs: all }) {
  const freqs = all[scheme];
  const pq = [qr + sr, qc + sc], pk = [kr + sr, kc + sc];
  const qRot = rotateAt(q, freqs, ...pq);
  const scores = [];
  for (let r = 0; r < grid; r++) {
    const row = [];
    for (let c = 0; c < grid; c++) row.push(dot(qRot, rotateAt(k, freqs, r, c)));
    scores.push(row);
  }
  return {
    pq, pk, scores,
    dr: kr - qr,
    dc: kc - qc,
    score: dot(qRot, rotateAt(k, freqs, ...pk)),
    score_unshifted: dot(rotateAt(q, freqs, qr, qc), rotateAt(k, freqs, kr, kc)),
    score_offset: dot(q, rotateAt(k, freqs, kr - qr, kc - qc)),
  };
}

function draw(fig) {
  const { qr, qc, kr, kc } = fig.state;
  const { grid, bound } = fig.data;
  const res = compute(fig.state, fig.data);
  const { pq, pk } = res;
  const cell = fig.layout.cell, x0 = 60, y0 = 30;
  const g = el("g", {}, fig.svg);
  for (let r = 0; r < grid; r++) {
    for (let c = 0; c < grid; c++) {
      const s = res.scores[r][c];
      const t = Math.min(1, Math.abs(s) / bound);
      el("rect", { x: x0 + c * cell, y: y0 + r * cell, width: cell - 1, height: cell - 1,
        fill: mixColor(s >= 0 ? COLORS.k : COLORS.q, t), class: "patch" }, g);
    }
  }
  // row and column numbers
  for (let i = 0; i < grid; i++) {
    text(g, x0 + i * cell + cell / 2, y0 - 8, String(i), { class: "tick-label", "text-anchor": "middle" });
    text(g, x0 - 8, y0 + i * cell + cell / 2 + 4, String(i), { class: "tick-label", "text-anchor": "end" });
  }
  text(g, x0 + (grid * cell) / 2, y0 + grid * cell + 22, "column", { class: "axis-label", "text-anchor": "middle" });
  const yl = text(g, 0, 0, "row", { class: "axis-label", "text-anchor": "middle" });
  yl.setAttribute("transform", `translate(${x0 - 30},${y0 + (grid * cell) / 2}) rotate(-90)`);
  const centre = ([r, c]) => [x0 + c * cell + cell / 2, y0 + r * cell + cell / 2];
  // where the two patches were before the shift
  for (const [p, col] of [[[qr, qc], COLORS.q], [[kr, kc], COLORS.k]]) {
    el("rect", { x: x0 + p[1] * cell + 3, y: y0 + p[0] * cell + 3, width: cell - 7, height: cell - 7,
      fill: "none", stroke: col, "stroke-width": 2, "stroke-dasharray": "4 3", opacity: 0.7 }, g);
  }
  for (const [p, col, label] of [[pq, COLORS.q, "q"], [pk, COLORS.k, "k"]]) {
    el("rect", { x: x0 + p[1] * cell + 1, y: y0 + p[0] * cell + 1, width: cell - 3, height: cell - 3,
      fill: "none", stroke: col, "stroke-width": 4 }, g);
    const [cx, cy] = centre(p);
    text(g, cx, cy + 5, label, { "text-anchor": "middle", "font-weight": "bold", fill: COLORS.black });
  }
  const [ax, ay] = centre(pq), [bx, by] = centre(pk);
  if (ax !== bx || ay !== by) arrow(g, ax, ay, bx, by, COLORS.black, { "stroke-width": 1.5, opacity: 0.8 });

  const s = res.score, s0 = res.score_unshifted, sOff = res.score_offset;
  // colour key and the readouts' meaning
  const lx = x0 + grid * cell + 30;
  text(fig.svg, lx, 44, "colour: score of q with a key", { class: "legend-label" });
  text(fig.svg, lx, 60, "at that patch", { class: "legend-label" });
  for (let i = 0; i <= 10; i++) {
    const v = -1 + i / 5;
    el("rect", { x: lx + i * 16, y: 70, width: 16, height: 14, fill: mixColor(v >= 0 ? COLORS.k : COLORS.q, Math.abs(v)) }, fig.svg);
  }
  text(fig.svg, lx, 98, fmt(-bound, 1), { class: "tick-label" });
  text(fig.svg, lx + 176, 98, fmt(bound, 1), { class: "tick-label", "text-anchor": "end" });
  legend(fig.svg, lx, 126, [["query patch (now)", COLORS.q], ["key patch (now)", COLORS.k],
    ["before the shift", COLORS.grey, true]]);
  text(fig.svg, lx, 196, `offset (Δrow, Δcol) = (${kr - qr}, ${kc - qc})`, { class: "legend-label" });
  text(fig.svg, lx, 214, `score now      ${fmt(s, 4)}`, { class: "legend-label" });
  text(fig.svg, lx, 232, `before shift   ${fmt(s0, 4)}`, { class: "legend-label" });
  text(fig.svg, lx, 250, `from offset    ${fmt(sOff, 4)}`, { class: "legend-label" });
  text(fig.svg, lx, 280, "The shift moves q, k and", { class: "legend-label" });
  text(fig.svg, lx, 296, "the whole colour pattern;", { class: "legend-label" });
  text(fig.svg, lx, 312, "the score stays.", { class: "legend-label" });

  fig.readout("dr", "Δrow", res.dr, 0);
  fig.readout("dc", "Δcolumn", res.dc, 0);
  fig.readout("score", "score ⟨R(p_q)q, R(p_k)k⟩", s, 4);
  fig.readout("score_unshifted", "score before the shift", s0, 4);
  fig.readout("score_offset", "qᵀR(p_k − p_q)k", sOff, 4);
}

export { compute };
// Wide: the key right of the grid. Narrow: smaller cells, the key under the grid (tiles).
export default figure(draw, { layouts: [
  { width: 640, height: 420, cell: 44 },
  { width: 640, height: 420, cell: 36, tiles: [[0, 12, 356, 336], [370, 30, 240, 290]] },
] });
