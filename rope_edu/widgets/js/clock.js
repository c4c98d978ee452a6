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
  const pairs = dim / 2, cols = 4, cellW = fig.width / cols, r = 50;
  const svg = fig.svg;
  fig.heading(`Hand i turns counter-clockwise by m·θᵢ, θᵢ = b^(−2i/d), d = ${dim}`, 20);
  legend(svg, 120, 40, [["at least one full turn made (solid ring)", COLORS.q]]);
  legend(svg, 420, 40, [["less than one turn (dashed ring)", COLORS.orange, true]]);
  let full = 0;
  for (let i = 0; i < pairs; i++) {
    const cx = cellW * (i % cols + 0.5), cy = 130 + 175 * Math.floor(i / cols);
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
    el("line", { x1: cx + r, y1: cy, x2: cx + r + 9, y2: cy, stroke: COLORS.black, "stroke-width": 1.5 }, g);  // angle 0: the start
    arrow(g, cx, cy, cx + 0.92 * r * Math.cos(angle), cy - 0.92 * r * Math.sin(angle), colour, { "stroke-width": 3 });
    el("circle", { cx, cy, r: 2.5, fill: COLORS.black }, g);
    text(g, cx, cy - r - 24, `pair ${i}`, { class: "axis-label", "text-anchor": "middle" });
    text(g, cx, cy - r - 9, `λ${subscript(i)} = ${fmt(wavelength[i], 1)}`, { class: "legend-label", "text-anchor": "middle" });
    text(g, cx, cy + r + 20, `${fmt(turns, 2)} turns`, { class: "legend-label", "text-anchor": "middle", fill: done ? colour : "#8a5a00" });
    fig.readout(`wavelength_${i}`, `λ${subscript(i)}`, wavelength[i], 1);
    fig.readout(`turns_${i}`, `turns${subscript(i)}`, turns, 2);
  }
  fig.readout("full_turns", "pairs with ≥ 1 full turn", full, 0, `of ${pairs}`);
  fig.note("λᵢ = 2π/θᵢ: the wavelength of pair i, in positions per turn; turnsᵢ = m·θᵢ/2π: the turns made so far.");
}

// Wide: four clocks a row. Narrow: the same drawing in tiles, the two legends, then two clocks a row.
export default figure(draw, { layouts: [
  { width: 680, height: 405 },
  { width: 680, height: 405, columnWidth: 340, tiles: [
    [112, 30, 296, 16], [412, 30, 256, 16],
    [0, 47, 340, 161], [340, 47, 340, 161], [0, 222, 340, 161], [340, 222, 340, 161],
  ] },
] });
