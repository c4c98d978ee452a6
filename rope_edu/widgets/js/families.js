// Chapter 10, page 2: the model families rope_spec reads. Left (on a phone: above), every family
// as a dot in a grid of the pairs its code rotates against the part of the head that turns, the
// picked family ringed; right (below), the picked family's card. Every entry is a field of the
// family's row of rope_edu.models.FAMILIES (rope_edu.widgets.families.data()).

const FAMILY_PAIRS = { half: "half-split pairs (i, i + r/2)", interleaved: "interleaved pairs (2i, 2i + 1)" };
const FAMILY_COLUMNS = { half: "half-split", interleaved: "interleaved" };
const FAMILY_TURNS = { head: "the whole head", fraction: "a leading fraction", rotary_dim: "a leading block",
  mla: "a separate block (MLA)" };
const FAMILY_NORMS = { none: "not normalised", before_rope: "normalised, then rotated",
  after_rope: "rotated, then divided by their root mean square" };
const DOT = 9;  // units between two dots of the grid
const TOUCH_PX = 12;  // a touch this near a dot picks it: a 24 px target
let familyFocus = null;  // the family a dot just picked: its new dot takes the focus

function groupedInt(v) { return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

// The readouts, from the controls and data() alone: the counterpart of families.readouts.
function familyNumbers(state, data) {
  const f = data.families[state.family];
  const same = Object.values(data.families).filter((g) => g.layout === f.layout && g.rotary === f.rotary).length;
  return { same, base: f.base, scalings: f.scalings ? f.scalings.length : data.rope_types };
}

// The card's lines: what the family's code does with RoPE.
function cardLines(f, data) {
  const lines = [`model_type: ${f.model_types.join(", ")}`];
  let pairs = `pairs: ${FAMILY_PAIRS[f.layout]}`;
  if (f.interleave) pairs += `; with ${f.interleave[0]} = ${f.interleave[1]} (the default): read interleaved, written back half-split`;
  if (f.clockwise) pairs += "; turned clockwise";
  lines.push(pairs);
  lines.push(f.rotary === "fraction"
    ? `rotates: a leading fraction of the head, ${f.fraction} when the config states none`
    : `rotates: ${FAMILY_TURNS[f.rotary]}`);
  const bases = Object.entries(f.bases);
  lines.push(bases.length
    ? `base when the config states none: ${bases.map(([t, b]) => `${groupedInt(b)} (${t})`).join(", ")}`
    : `base when the config states none: ${groupedInt(f.base)}`);
  if (f.head === "split") lines.push("head size: hidden_size / num_attention_heads");
  else if (f.head !== "head_dim") lines.push(`head size: ${f.head}`);
  else lines.push(f.head_default ? `head size: head_dim, else ${f.head_default}`
    : "head size: head_dim, else hidden_size / num_attention_heads");
  lines.push(`queries and keys: ${FAMILY_NORMS[f.qk_norm]}`);
  lines.push(f.layers_differ ? `layers: ${f.layers}` : "layers: every attention layer rotates alike");
  lines.push(f.scalings ? `scaling types: ${f.scalings.join(", ")}` : `scaling types: all ${data.rope_types} that rope_spec reads`);
  if (f.mrope) lines.push(`M-RoPE: sections ${f.mrope[1].join(", ")} (${f.mrope[0]})`);
  lines.push(`code: ${f.code}`);
  return lines;
}

function draw(fig) {
  const d = fig.data, L = fig.layout, key = fig.state.family, f = d.families[key];
  const n = familyNumbers(fig.state, d);
  const keys = Object.keys(d.families);
  fig.svg.setAttribute("role", "group");   // not an image: its dots are options to pick
  fig.heading(`${keys.length} families rope_spec reads, by their pairs and the part of the head that turns`);
  // the grid: one column per pair layout, one row per rotated part, one dot per family
  const { x: gx, y: gy, label: lw, col } = L.grid;
  const perRow = Math.floor((col - 10) / DOT);
  d.layouts.forEach((lay, j) => text(fig.svg, gx + lw + j * col + col / 2, gy, FAMILY_COLUMNS[lay],
    { class: "axis-label", "text-anchor": "middle" }));
  let y = gy + 10;
  let picked = null;
  // The dots are a list box (drawn over the cells, after them): a click or tap on a dot picks its
  // family; by keyboard one Tab stop (the picked dot), arrows move from dot to dot in the grid's
  // order, Enter or Space picks.
  const box = el("g", { role: "listbox", "aria-label": tr("model families in the grid") });
  const dots = [];
  // A phone's layout (grid.spread: units between dots, about 24 px there) spreads the dots of a
  // cell that holds a few, as far apart as a fingertip needs; the crowded cells keep DOT.
  const spread = L.grid.spread || 0;
  const spreadPer = spread ? Math.floor((col - 8) / spread) : 0;
  const spreads = (cell) => spread > 0 && Math.ceil(cell.length / spreadPer) <= 2;
  const cellDots = [];  // per cell: its rect and its dots (a tap near a dot picks it)
  for (const rot of d.rotary) {
    const cells = d.layouts.map((lay) => keys.filter((k) => d.families[k].layout === lay && d.families[k].rotary === rot));
    const crowded = cells.filter((c) => !spreads(c));
    let h = 24 + Math.ceil(Math.max(1, ...crowded.map((c) => c.length)) / perRow) * DOT;
    for (const c of cells.filter(spreads)) {
      h = Math.max(h, 26 + (Math.ceil(c.length / spreadPer) - 1) * spread + spread / 2);
    }
    textLines(fig.svg, gx, y + 16, FAMILY_TURNS[rot], L.grid.chars, { class: "legend-label" });
    cells.forEach((cell, j) => {
      const x0 = gx + lw + j * col;
      const mine = cell.includes(key);
      const rect = el("rect", { x: x0 + 2, y, width: col - 4, height: h - 4, rx: 4, fill: mine ? "#e8f1f8" : "#f6f6f6",
        stroke: mine ? COLORS.q : "#ddd" }, fig.svg);
      text(fig.svg, x0 + col - 8, y + 14, `${cell.length}`, { class: "tick-label", "text-anchor": "end" });
      const wide = spreads(cell);
      const [step, per, left] = wide ? [spread, spreadPer, x0 + 4 + spread / 2] : [DOT, perRow, x0 + 9];
      const mineDots = [];
      cell.forEach((k, i) => {
        const cx = left + (i % per) * step, cy = y + 22 + Math.floor(i / per) * step;
        const dot = el("circle", { cx, cy, r: 3, fill: d.families[k].layers_differ ? COLORS.orange : COLORS.q,
          class: "rope-fig-pick", role: "option", "aria-label": d.families[k].label,
          "aria-selected": String(k === key), tabindex: k === key ? 0 : -1, "data-family": k });
        dots.push(dot);
        mineDots.push(dot);
        if (k === key) picked = [cx, cy];
      });
      cellDots.push([rect, mineDots]);
    });
    y += h;
  }
  const pick = (k) => { familyFocus = k; fig.model.set("family", k); fig.model.save_changes(); };
  // A touch (a finger, not a mouse) that lands in a cell near a dot rather than on it picks the
  // nearest dot within TOUCH_PX: every dot's target is a 24 px disc, less only where another
  // dot is nearer (the crowded cells; the drop-down above the figure picks any family too).
  for (const [rect, mineDots] of cellDots) {
    rect.addEventListener("click", (e) => {
      if (e.pointerType !== "touch" && !matchMedia("(pointer:coarse)").matches) return;
      let best = null, bestDist = TOUCH_PX;
      for (const dot of mineDots) {
        const b = dot.getBoundingClientRect();
        const dist = Math.hypot(b.x + b.width / 2 - e.clientX, b.y + b.height / 2 - e.clientY);
        if (dist <= bestDist) { best = dot; bestDist = dist; }
      }
      if (best) pick(best.dataset.family);
    });
  }
  dots.forEach((dot, i) => {
    box.appendChild(dot);
    dot.addEventListener("click", () => pick(dot.dataset.family));
    // arrows, Home, End and Space come through the engine's key handler (ropeKeyStep: notebook
    // front ends take those keys first); Enter here
    dot.ropeKeyStep = (k) => {
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[k];
      const to = k === "Home" ? 0 : k === "End" ? dots.length - 1 : step ? i + step : null;
      if (k === " ") pick(dot.dataset.family);
      else if (to !== null && to >= 0 && to < dots.length) {
        dot.setAttribute("tabindex", "-1");
        dots[to].setAttribute("tabindex", "0");
        dots[to].focus();
      }
    };
    dot.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      pick(dot.dataset.family);
    });
  });
  fig.svg.appendChild(box);
  if (familyFocus) {   // picked by a dot: the focus stays on the picked dot, drawn anew
    const again = dots.find((dot) => dot.dataset.family === familyFocus);
    familyFocus = null;
    if (again) again.focus();
  }
  if (picked) el("circle", { cx: picked[0], cy: picked[1], r: 6.5, fill: "none", stroke: COLORS.black, "stroke-width": 2,
    "pointer-events": "none" }, fig.svg);
  legend(fig.svg, gx, y + 12, [["every layer alike", COLORS.q], ["layers differ (types, NoPE layers)", COLORS.orange]]);
  // the card
  const { x: cx, y: cy, chars } = L.card;
  let ly = cy;
  const title = textLines(fig.svg, cx, ly, f.label, chars, { class: "plot-title" });
  ly += 15 * title.lines.length + 4;
  for (const line of cardLines(f, d)) {
    const t = textLines(fig.svg, cx, ly, line, chars, { class: "legend-label" });
    ly += 15 * t.lines.length + 3;
  }
  fig.readout("same", "families with the same pairs and rotated part", n.same, 0);
  fig.readout("base", "base when the config states none", n.base, 0);
  fig.readout("scalings", "scaling types it accepts", n.scalings, 0);
}

export { familyNumbers, cardLines };
// Wide: the grid left, the card right. Narrow (a phone): the card under the grid.
export default figure(draw, { layouts: [
  { width: 690, height: 300, headingAbove: true, grid: { x: 4, y: 14, label: 100, col: 112, chars: 15 },
    card: { x: 334, y: 16, chars: 54 } },
  { width: 380, height: 544, headingAbove: true, grid: { x: 4, y: 14, label: 104, col: 136, chars: 16, spread: 26 },
    card: { x: 4, y: 266, chars: 56 } },
] });
