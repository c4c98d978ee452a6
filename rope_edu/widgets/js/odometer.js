// Chapter 2: a binary odometer next to sinusoidal clock hands, driven by one position p.
// Bit j flips every 2^j steps; pair j of PE(p) = (sin pθ_j, cos pθ_j) is a hand turning
// clockwise by θ_j = 2^−j per step (coordinate 2j across, 2j+1 up: p = 0 is 12 o'clock).
// Purple (accent) marks what changes from p to p + 1: the bits that flip, the arc each hand sweeps.
// The tables and steps come from rope_edu (data()); only the count of flipped bits is counted here.

function draw(fig) {
  const { p } = fig.state;
  const { bits, pe, bit_steps: bitSteps, pe_steps: peSteps, theta } = fig.data;
  const nBits = bits[0].length, nPos = bits.length;
  const last = p === nPos - 1;
  const colX = (j) => 150 + 94 * (nBits - 1 - j);  // the most significant bit on the left, as numbers are written
  const svg = fig.svg;

  // Row labels.
  text(svg, 12, 58, "binary", { class: "axis-label" });
  text(svg, 12, 74, "bits of p", { class: "legend-label" });
  text(svg, 12, 150, "sinusoidal", { class: "axis-label" });
  text(svg, 12, 166, "pairs of PE(p)", { class: "legend-label" });

  // Bits of p, and of p + 1 to see which flip.
  let flips = 0;
  for (let j = 0; j < nBits; j++) {
    const x = colX(j), on = bits[p][j] === 1;
    const flip = !last && bits[p + 1][j] !== bits[p][j];
    if (flip) flips++;
    text(svg, x, 30, `bit ${j}`, { class: "legend-label", "text-anchor": "middle" });
    el("rect", { x: x - 20, y: 40, width: 40, height: 40, rx: 3, fill: on ? COLORS.k : "#fff",
      stroke: flip ? COLORS.accent : COLORS.black, "stroke-width": flip ? 4 : 1 }, svg);
    text(svg, x, 67, on ? "1" : "0", { "text-anchor": "middle", "font-size": 20, fill: on ? "#fff" : COLORS.black });
  }

  // Clock hands: pair j is the point (pe[2j], pe[2j+1]) on the unit circle.
  const r = 34, cy = 150;
  for (let j = 0; j < nBits; j++) {
    const x = colX(j), a = pe[p][2 * j], b = pe[p][2 * j + 1];
    el("circle", { cx: x, cy, r, fill: "none", stroke: COLORS.grey, "stroke-width": 1 }, svg);
    el("line", { x1: x, x2: x, y1: cy - r - 4, y2: cy - r + 4, stroke: COLORS.grey, "stroke-width": 1.5 }, svg);  // p = 0
    if (!last) {  // the arc the hand sweeps to p + 1: clockwise by θ_j (screen y points down)
      const ang = Math.atan2(b, a), n = 24, rr = r + 7, pts = [];
      for (let i = 0; i <= n; i++) {
        const t = ang - (theta[j] * i) / n;
        pts.push(`${i ? "L" : "M"}${(x + rr * Math.cos(t)).toFixed(2)},${(cy - rr * Math.sin(t)).toFixed(2)}`);
      }
      el("path", { d: pts.join(""), fill: "none", stroke: COLORS.accent, "stroke-width": 3 }, svg);
    }
    el("line", { x1: x, y1: cy, x2: x + r * a, y2: cy - r * b, stroke: COLORS.q, "stroke-width": 2.5, "stroke-linecap": "round" }, svg);
    el("circle", { cx: x + r * a, cy: cy - r * b, r: 3.5, fill: COLORS.q }, svg);
    el("circle", { cx: x, cy, r: 2, fill: COLORS.black }, svg);
    text(svg, x, cy + r + 20, `pair ${j}`, { class: "legend-label", "text-anchor": "middle" });
    text(svg, x, cy + r + 35, j === 0 ? "θ = 1" : `θ = 1/${2 ** j}`, { class: "legend-label", "text-anchor": "middle" });
  }
  el("rect", { x: 12, y: 226, width: 14, height: 10, fill: "none", stroke: COLORS.accent, "stroke-width": 3 }, svg);
  textLines(svg, 32, 235, "what changes from p to p + 1: the bits that flip, the arc θ each hand sweeps", fig.layout.keyChars, { class: "legend-label" }, 13);

  // Steps ‖code(q+1) − code(q)‖ for every q: jagged for the bits, flat for the hands.
  const roots = [[0, "0"], [1, "1"], [Math.SQRT2, "√2"], [Math.sqrt(3), "√3"], [2, "2"], [Math.sqrt(5), "√5"], [Math.sqrt(6), "√6"]];
  const P = plot(svg, fig.layout.plot, {
    x: [0, nPos - 1], y: [0, 2.6], yticks: roots, xticks: [0, 8, 16, 24, 32, 40, 48, 56, 63],
    xlabel: "position p", ylabel: "‖code(p+1) − code(p)‖", ylabelOffset: 44,
  });
  const stepPts = [];
  bitSteps.forEach((s, q) => { stepPts.push([q, s], [q + 1, s]); });
  line(P, stepPts, { stroke: COLORS.k });
  line(P, peSteps.map((s, q) => [q, s]).concat([[nPos - 1, peSteps[peSteps.length - 1]]]), { stroke: COLORS.q });
  el("line", { x1: P.sx(p), x2: P.sx(p), y1: P.box.y, y2: P.box.y + P.box.h, stroke: COLORS.grey, "stroke-dasharray": "3 3", "stroke-width": 1.5 }, P.g);
  if (!last) {
    el("circle", { cx: P.sx(p + 0.5), cy: P.sy(bitSteps[p]), r: 4, fill: COLORS.k }, P.g);
    el("circle", { cx: P.sx(p + 0.5), cy: P.sy(peSteps[p]), r: 4, fill: COLORS.q }, P.g);
  }
  legend(svg, 100, 256, [["binary: √(number of bits that flip)", COLORS.k]]);
  legend(svg, 390, 256, [["sinusoidal: the same every step", COLORS.q]]);

  fig.readout("flips", "bits that flip, p → p+1", last ? NaN : flips, 0);
  fig.readout("bit_step", "binary step ‖b(p+1) − b(p)‖", last ? NaN : bitSteps[p], 3);
  fig.readout("pe_step", "sinusoidal step ‖PE(p+1) − PE(p)‖", last ? NaN : peSteps[p], 3);
  fig.note(last ? `p = ${p} is the last position of the ${nBits}-bit table: there is no p + 1.`
    : `p = ${p} is ${bits[p].slice().reverse().join("")} in binary; p + 1 is ${bits[p + 1].slice().reverse().join("")}.`);
}

// Wide: six bits and hands in a row. Narrow: the same drawing in tiles (row labels and three
// columns a row), the key wrapped, the legends stacked, a narrower plot.
const COLUMN = (j) =>  // the column of bit j of data()'s 6-bit table: its box, its hand, its labels
 [150 + 94 * (5 - j) - 42, 14, 84, 208];
export default figure(draw, { layouts: [
  { width: 680, height: 490, keyChars: 200, plot: { x: 90, y: 272, w: 560, h: 170 } },
  { width: 680, height: 490, keyChars: 48, plot: { x: 90, y: 272, w: 258, h: 170 }, gap: 6, columnWidth: 362,
    tiles: [[8, 40, 92, 140], COLUMN(5), COLUMN(4), COLUMN(3), [8, 470, 92, 2], COLUMN(2), COLUMN(1), COLUMN(0),
      [8, 222, 352, 28], [96, 249, 250, 16], [386, 249, 230, 16], [0, 264, 360, 222]] },
] });
