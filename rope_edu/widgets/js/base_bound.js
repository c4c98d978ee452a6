// Chapter 5: the base bounds the context. Left: the wavelengths λ_i = 2π·b^(2i/d) of the d/2 pairs
// against the context L (pairs with λ_i ≤ L turn at least once within it). Right: contexts against
// bases; for every base on the slider the band up to rope_edu.max_context (where Men et al.'s
// Σ_i cos δθ_i ≥ 0 first fails) is shaded, computed in Python and sent in fig.data. Released models
// that rotate whole heads of the chosen size sit at (trained context, base), hollow at the
// context they are released for.

function shortName(name) {
  return name.replace(/ \d+(\.\d+)?[BM]\b/, "").replace(" mini 128K", "-3 mini").replace("Phi-3-3", "Phi-3")
    .replace(", local layers", " local").replace(", global layers", " global").replace(" v0.1", "");
}

function draw(fig) {
  const d = Number(fig.state.head_dim);
  const k = Math.round((fig.state.log10_base - 3) / 0.1);
  const L = Math.pow(2, Math.round(fig.state.log2_context));
  const { bases, reach, models } = fig.data;
  const b = bases[k];
  const reaches = reach[String(d)];
  const svg = fig.svg;

  // left: wavelengths against the context
  const pairs = d / 2;
  const lam = [];
  let turning = 0;
  for (let i = 0; i < pairs; i++) {
    lam.push(2 * Math.PI * Math.pow(b, (2 * i) / d));
    if (lam[i] <= L) turning++;
  }
  const left = plot(svg, { x: 62, y: 34, w: 230, h: 286 }, {
    x: [-1, pairs], y: [1, 1e9], ylog: true, xlabel: "pair index i", ylabel: "wavelength λᵢ (tokens, log)",
    title: `d = ${d}, b = ${fmt(b, 0)}`,
  });
  el("line", { x1: left.box.x, x2: left.box.x + left.box.w, y1: left.sy(L), y2: left.sy(L), stroke: COLORS.black,
    "stroke-width": 1.5, "stroke-dasharray": "5 3" }, left.g);
  text(left.g, left.box.x + 4, left.sy(L) - 5, `L = ${fmt(L, 0)}`, { class: "legend-label" });
  lam.forEach((l, i) => {
    el("circle", { cx: left.sx(i), cy: left.sy(l), r: pairs > 64 ? 1.8 : 2.6, fill: l <= L ? COLORS.q : COLORS.orange }, left.g);
  });

  // right: the plane of contexts and bases
  const xr = [128, 3.4e7], yr = [1e3, 1e8];
  const right = plot(svg, fig.layout.right, {
    x: xr, y: yr, xlog: true, ylog: true, xlabel: "context L (tokens, log)", ylabel: "base b (log)",
    title: `Men et al.'s criterion, d = ${d}`, ylabelOffset: 44,
  });
  const half = Math.pow(10, 0.05);
  bases.forEach((bk, j) => {
    const x1 = right.sx(Math.min(reaches[j], xr[1]));
    const y0 = right.sy(bk * half), y1 = right.sy(bk / half);
    if (x1 > right.box.x) {
      el("rect", { x: right.box.x, y: y0, width: x1 - right.box.x, height: y1 - y0, fill: COLORS.sky, "fill-opacity": 0.45 }, right.g);
    }
  });
  const shown = models.filter((m) => m.head_dim === d);
  const spots = new Map();
  shown.forEach((m) => {
    const key = `${m.trained}|${m.base}`;
    spots.set(key, (spots.get(key) ? spots.get(key) + ", " : "") + shortName(m.name));
    if (m.released) {
      el("line", { x1: right.sx(m.trained), x2: right.sx(Math.min(m.released, xr[1])), y1: right.sy(m.base), y2: right.sy(m.base),
        stroke: COLORS.black, "stroke-width": 1, "stroke-dasharray": "2 2" }, right.g);
      el("circle", { cx: right.sx(m.released), cy: right.sy(m.base), r: 3.5, fill: "white", stroke: COLORS.black,
        "stroke-width": 1.2 }, right.g);
    }
    el("circle", { cx: right.sx(m.trained), cy: right.sy(m.base), r: 3.5, fill: COLORS.black }, right.g);
  });
  // each spot named on the plot (short names, as in the chapter's static figure of the models),
  // beside its dot: the first of six places where the name clears the dots, the dotted lines and
  // the names already placed, and stays inside the panel
  const placed = [];
  shown.forEach((m) => {
    const x = right.sx(m.trained), y = right.sy(m.base);
    const x2 = m.released ? right.sx(Math.min(m.released, xr[1])) : x;
    placed.push({ x: x - 4, y: y - 4, w: x2 - x + 8, h: 8 });
  });
  const clear = (r) => r.x >= right.box.x + 2 && r.x + r.w <= right.box.x + right.box.w - 2 && r.y >= right.box.y + 2 &&
    r.y + r.h <= right.box.y + right.box.h - 2 &&
    placed.every((o) => r.x + r.w < o.x || o.x + o.w < r.x || r.y + r.h < o.y || o.y + o.h < r.y);
  for (const [spot, label] of spots) {
    const [t, base] = spot.split("|").map(Number);
    const cx = right.sx(t), cy = right.sy(base), w = 6.6 * label.length, h = 13;
    const sides = [[cx - 5 - w, cy - 6 - h], [cx + 5, cy - 6 - h], [cx - 5 - w, cy + 5], [cx + 5, cy + 5],
      [cx - 7 - w, cy - h / 2], [cx - w / 2, cy - 8 - h]].map(([x, y]) => ({ x, y, w, h }));
    const r = sides.find(clear) || sides[0];
    placed.push(r);
    text(right.g, r.x, r.y + h - 2, label, { class: "legend-label", "data-model": label });
  }
  const ok = L <= reaches[k];
  el("circle", { cx: right.sx(L), cy: right.sy(b), r: 7, fill: ok ? COLORS.v : COLORS.k, stroke: COLORS.black,
    "stroke-width": 1.5, "fill-opacity": 0.85 }, right.g);

  legend(svg, 62, 364, [["λᵢ ≤ L: at least one turn within L", COLORS.q], ["λᵢ > L: less than one turn", COLORS.orange]]);
  legend(svg, 392, 364, [["criterion holds (per base, up to its first failure)", COLORS.sky],
    ["released model: trained / released context", COLORS.black, true]]);

  // the criterion's reach first (on a desktop its first line is on the first screen); on a phone
  // (compact) the readouts sit between the controls and the plots (readoutsAbove), and the base
  // and the context are on their sliders already
  fig.readout("reach", "criterion holds up to", reaches[k], 0, "tokens");
  fig.readout("ratio", "reach ÷ L", reaches[k] / L, 3);
  fig.readout("turning", "pairs with λᵢ ≤ L", turning, 0, `of ${pairs}`);
  if (!fig.layout.compact) {
    fig.readout("critical", "critical dimension", 2 * turning, 0, `of ${d}`);
    fig.readout("base", "base b", b, b >= 1e6 ? 2 : 0);
    fig.readout("context", "context L", L, 0, "tokens");
  }
  if (spots.size) {
    fig.note("Dots: the trained context (or a sliding window or attention chunk); rings: the released context; " +
      "both at the model's own base. The shade is for unscaled frequencies, so it does not judge a ring whose " +
      "model scales its frequencies (the chapter's table gives the scaled reach).");
  }
  fig.note(`The marker is (L, b): green where the criterion holds at every distance below L, vermillion where it fails. ` +
    `Only models that rotate every coordinate of a ${d}-dimensional head are drawn; partial rotary and MLA never fail it.`);
}

// 745 wide: the drawing's smallest width (10 px text) then fits the book's 688 px column at 1280 px
// Wide: the two panels side by side. Narrow (a phone): the panels and legends stacked (tiles),
// the criterion panel first, shorter and narrower, with its legend, so that it shares the page's
// first screen with the controls, and the readouts above them (readoutsAbove), so that the reach
// stays in view while the base is dragged; the wavelengths and their legend under it.
export default figure(draw, { layouts: [
  { width: 745, height: 400, right: { x: 392, y: 34, w: 335, h: 286 } },
  { width: 745, height: 400, right: { x: 392, y: 34, w: 290, h: 236 }, readoutsAbove: true, compact: true,
    tiles: [[336, 12, 360, 298], [384, 354, 352, 36], [0, 12, 310, 344], [54, 354, 300, 36]] },
] });
