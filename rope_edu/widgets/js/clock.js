// Chapter 5: the RoPE clock. Pair i is a hand that starts pointing right at m = 0 and turns
// counter-clockwise by m·θ_i, θ_i = b^(−2i/d) (computed by rope_edu.frequencies, sent in fig.data).
// The shaded sector is the angle within the current turn; a hand that has made at least one full
// turn is blue with a solid ring, one that has not is orange with a dashed ring.

function sector(parent, cx, cy, r, angle, attrs) {
  // The sector from angle 0 to `angle` (radians, counter-clockwise; SVG's y axis points down).
  const a = angle % (2 * Math.PI);
  if (a < 1e-9) return null;
  const x = cx + r * Math.cos(a), y = cy - r * Math.sin(a);
  const large = a > Math.PI ? 1 : 0;
  return el("path", { d: `M${cx},${cy}L${cx + r},${cy}A${r},${r} 0 ${large} 0 ${x.toFixed(2)},${y.toFixed(2)}Z`, ...attrs }, parent);
}

function draw(fig) {
  const { m, base } = fig.state;
  const { dim } = fig.data;
  const { theta, wavelength } = fig.data.bases[base];
  // The layout sets the dials' grid: `cols` a row, `cellW` x `cellH` units each, radius `r`, the
  // first row's centre at `top`; a compact one (a phone) leaves out the "pair i" line (λ's
  // subscript names the pair) and the per-dial readouts (the dials print them).
  const { cols, cellH, r, top, legends, compact } = fig.layout;
  const pairs = dim / 2, cellW = fig.width / cols;
  const svg = fig.svg;
  fig.heading(`Hand i turns counter-clockwise by m·θᵢ radians, d = ${dim}`, 20);
  legend(svg, legends[0][0], legends[0][1], [["at least one full turn made (solid ring)", COLORS.q]]);
  legend(svg, legends[1][0], legends[1][1], [["less than one turn (dashed ring)", COLORS.orange, true]]);
  let full = 0;
  for (let i = 0; i < pairs; i++) {
    const cx = cellW * (i % cols + 0.5), cy = top + cellH * Math.floor(i / cols);
    const angle = m * theta[i], turns = angle / (2 * Math.PI);
    const done = Math.abs(turns) >= 1;
    if (done) full++;
    const colour = done ? COLORS.q : COLORS.orange;
    const g = el("g", { class: "dial" }, svg);
    sector(g, cx, cy, r, angle, { fill: colour, "fill-opacity": 0.15, stroke: "none" });
    el("circle", { cx, cy, r, fill: "none", stroke: done ? colour : COLORS.grey, "stroke-width": done ? 1.8 : 1.2, "stroke-dasharray": done ? null : "4 3" }, g);
    for (let q = 1; q < 4; q++) {  // quarter-turn marks
      const a = (q * Math.PI) / 2;
      el("line", { x1: cx + 0.9 * r * Math.cos(a), y1: cy - 0.9 * r * Math.sin(a), x2: cx + r * Math.cos(a), y2: cy - r * Math.sin(a), class: "tick" }, g);
    }
    el("line", { x1: cx + r, y1: cy, x2: cx + r + 0.18 * r, y2: cy, stroke: COLORS.black, "stroke-width": 1.5 }, g);  // angle 0: the start
    arrow(g, cx, cy, cx + 0.92 * r * Math.cos(angle), cy - 0.92 * r * Math.sin(angle), colour, { "stroke-width": compact ? 2.5 : 3 });
    el("circle", { cx, cy, r: 2.5, fill: COLORS.black }, g);
    if (!compact) text(g, cx, cy - r - 24, `pair ${i}`, { class: "axis-label", "text-anchor": "middle" });
    text(g, cx, cy - r - 9, `λ${subscript(i)} = ${fmt(wavelength[i], compact && wavelength[i] >= 1000 ? 0 : 1)}`, { class: "legend-label", "text-anchor": "middle" });
    text(g, cx, cy + r + 18, `${turnsLabel(turns, compact)} turns`, { class: "legend-label", "text-anchor": "middle", fill: done ? colour : "#8a5a00" });
    if (!compact) {
      fig.readout(`wavelength_${i}`, `λ${subscript(i)}`, wavelength[i], 1);
      fig.readout(`turns_${i}`, `turns${subscript(i)}`, turns, 2);
    }
  }
  fig.readout("full_turns", "pairs with ≥ 1 full turn", full, 0, `of ${pairs}`);
  fig.note("λᵢ = 2π/θᵢ: the wavelength of pair i, in positions per turn; turnsᵢ = m·θᵢ/2π: the turns made so far.");
}

// Wide: four clocks a row, 170 units apart. Narrow (a phone): four a row too, smaller, in a
// 360-unit view with the heading above it as text, so that the controls and all eight dials
// share the page's first screen; the dials print each wavelength and turn count, so the readouts
// below keep only the count of full turns.
// A dial's turn count as a reader reads it: "0.0048", not fmt's "4.8e−3" (issue 45); a hand that
// has barely moved reads "< 0.0001"; a large count on a phone without decimals.
function turnsLabel(turns, compact) {
  const a = Math.abs(turns);
  if (a > 0 && a < 0.0001) return "< 0.0001";
  if (a > 0 && a < 0.01) return (Math.round(turns * 1e4) / 1e4).toFixed(4).replace(/0+$/, "");
  return fmt(turns, compact && a >= 100 ? 0 : 2);
}

export default figure(draw, { layouts: [
  { width: 680, height: 405, cols: 4, cellH: 175, r: 50, top: 130, legends: [[120, 40], [420, 40]] },
  { width: 360, height: 272, cols: 4, cellH: 122, r: 30, top: 92, legends: [[40, 12], [40, 30]],
    compact: true, headingAbove: true },
] });
export { turnsLabel };
