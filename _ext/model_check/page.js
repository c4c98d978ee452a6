// The "Check your model" page (book/model_check.md): reads a pasted config.json, or a published model,
// with rope_spec.js and shows what the model's code does to positions. Runs in the reader's browser
// only: nothing is sent anywhere, no kernel. The rules come from registry.js, written by the book build
// from the package (rope_edu.spec_export). The page's words are English; on a Chinese page (<html lang>) each
// is shown through the site's catalog (rope_edu/locales/zh_CN.json, read by the figures' loader) as it is
// written, English strings with their values filled in, so checks.js and rope_spec.js stay in English.
// rope_spec's refusals are shown through the catalog too; what describe() prints stays English (the
// Python function's words, to paste into a bug report), and the Chinese page says so above it.

import registry from "./registry.js";
import { ropeSpec, familyOf, fmtG, SpecError } from "./rope_spec.js";
import { contexts, headSource, layerPlan, pairTable, ranges, warnings } from "./checks.js";
import { translator } from "../rope_figures/loader.js";

/** An English string in the page's language (the identity on the English page). */
const T = await translator();

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
};
// 4 significant digits; large numbers (wavelengths, turns) as grouped integers, 11,970 rather than 1.197e+04
const num = (x) => (x === null || x === undefined ? "–" : !Number.isFinite(x) ? "∞"
  : Math.abs(x) >= 1e4 && Math.abs(x) < 1e15 ? Number(fmtG(x, 4)).toLocaleString("en-US", { maximumFractionDigits: 0 }) : fmtG(x, 4));
const tokens = (n) => (n ? n.toLocaleString("en-US") : "unknown");

const state = { published: null };

function setup() {
  // describe()'s text stays English (for a bug report, as Python prints it): said so to a screen reader,
  // and to the reader above it
  if (T.chinese) {
    $("mc-describe").lang = "en";
    $("mc-describe-note").textContent = T("This block stays in English, word for word as rope_edu's describe() prints it " +
      "in Python: paste it as it is into an issue upstream (transformers, an inference engine).");
    $("mc-describe-note").hidden = false;
  }
  const picker = $("mc-published");
  registry.published.forEach((p, i) => picker.append(el("option", { value: String(i) }, p.verified ? T(p.name) : T(`${p.name} (not verified)`))));
  picker.addEventListener("change", () => {
    const p = registry.published[Number(picker.value)];
    state.published = p || null;
    if (p) {
      $("mc-config").value = JSON.stringify(p.config, null, 2);
      check(p.select);
    }
  });
  $("mc-config").addEventListener("input", () => {
    if (state.published) {
      state.published = null;
      picker.value = "";
    }
  });
  $("mc-check").addEventListener("click", () => check());
  $("mc-layer").addEventListener("change", () => check(null, true));
  $("mc-form").addEventListener("submit", (e) => { e.preventDefault(); check(); });
  // model_check.html?model=Llama%203.1%208B opens at a published model (links from the chapters)
  const wanted = new URLSearchParams(location.search).get("model");
  const index = registry.published.findIndex((p) => p.name === wanted);
  if (index >= 0) {
    picker.value = String(index);
    picker.dispatchEvent(new Event("change"));
  } else {
    $("mc-status").textContent = T("Paste a config.json or pick a published model, then press Check.");
  }
}

/** The message for text that is not a config.json object, or null. */
function parse(text) {
  if (!text.trim()) return { error: "The box is empty: paste the contents of a config.json, or pick a published model." };
  let config;
  try {
    config = JSON.parse(text);
  } catch (err) {
    return { error: `This is not JSON, so not a config.json: ${err.message}. Paste the whole file, from its opening { to its closing }.` };
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    const what = Array.isArray(config) ? "a list" : config === null ? "null" : `a ${typeof config}`;
    return { error: `This JSON is ${what}; a config.json is one object, {"model_type": ..., ...}.` };
  }
  return { config };
}

/** Options of the layer picker, or [] where every layer is the same. */
function layerOptions(config, plan) {
  if (plan && plan.differ) {
    return plan.types.map((t, i) => ({ value: `layer:${i}`, label: T(t ? `layer ${i} (${t})` : `layer ${i}`), type: t }));
  }
  if (plan) return [];
  try {
    ropeSpec(registry, config);
    return [];
  } catch (err) {
    if (!(err instanceof SpecError) || !/layer_type is required/.test(err.message)) return [];
    const { family } = familyOf(registry, config);
    const types = [...new Set([...(family.rotating_layer_types || []), ...registry.local_global])];
    return types.map((t) => ({ value: `type:${t}`, label: t, type: t }));
  }
}

function fillLayers(options, select, plan = null) {
  const box = $("mc-layer-box"), picker = $("mc-layer");
  const before = picker.value;
  picker.replaceChildren(...options.map((o) => el("option", { value: o.value }, o.label)));
  box.hidden = options.length === 0;
  if (!options.length) return;
  let want = before;
  if (plan && !options.some((o) => o.value === want)) {
    // a new config: open at its first layer that uses RoPE (Qwen3-Next's layer 0 is a linear-attention layer)
    const first = plan.groups.find((g) => g.summary.includes("RoPE on"));
    if (first) want = `layer:${first.layers[0]}`;
  }
  if (select && Number.isInteger(select.layer)) want = `layer:${select.layer}`;
  else if (select && select.layer_type) want = options.find((o) => o.type === select.layer_type)?.value;
  picker.value = options.some((o) => o.value === want) ? want : options[0].value;
}

function selection() {
  if ($("mc-layer-box").hidden) return {};
  const [kind, value] = $("mc-layer").value.split(/:(.*)/s);
  return kind === "layer" ? { layer: Number(value) } : { layerType: value };
}

function showError(title, message) {
  const box = $("mc-error");
  const cut = message.indexOf("; supported: ");
  const shown = cut < 0 ? message : message.slice(0, cut) + ".";
  // rope_spec's own refusals stay in English (the Python function's words): marked so on a Chinese page
  const said = el("p", T.chinese && T(shown) === shown ? { class: "mc-message", lang: "en" } : { class: "mc-message" }, T(shown));
  const parts = [el("p", {}, el("strong", {}, T(title) + " ")), said];
  if (cut >= 0) {
    // the model_types rope_spec reads: a hundred names, folded so that the message itself stays short
    const names = message.slice(cut + "; supported: ".length);
    parts.push(el("p", {}, T("Check the spelling of model_type against the repository's config.json; a multimodal " +
      "model's language model is often in its text_config.")));
    parts.push(el("details", {}, el("summary", {}, T(`The ${names.split(", ").length} model_type values this page reads`)),
      el("p", { class: "mc-message" }, names)));
  }
  box.replaceChildren(...parts);
  box.hidden = false;
}

function clear() {
  for (const id of ["mc-error", "mc-output"]) $(id).hidden = true;
  $("mc-warnings").replaceChildren();
}

/** Read the box and show everything; ``select`` comes with a published model, ``keepLayers`` on a layer change. */
function check(select = null, keepLayers = false) {
  clear();
  try {
    run(select, keepLayers);
  } catch (err) {
    // never a blank result: a bug of this page says so, in words
    showError("This page failed on that config:", `${err && err.message ? err.message : err}. ` +
      "Please report it with the config.json (rope_edu.rope_spec in Python reads the same rules).");
    $("mc-status").textContent = T("Error.");
  }
}

/** Where a published model's values come from (rows not checked against a released file say so). */
function showSource(p) {
  const box = $("mc-source");
  box.hidden = !p;
  if (!p) return;
  const note = p.note;
  box.textContent = T(p.verified ? (note ? `Values from the book's table of released models (${note}).`
    : "Values from the book's table of released models.")
    : note ? `Not verified: these values were not checked against the released config.json, so check them before you rely on them (${note}).`
      : "Not verified: these values were not checked against the released config.json, so check them before you rely on them.");
}

function run(select, keepLayers) {
  showSource(state.published);
  const parsed = parse($("mc-config").value);
  if (parsed.error) {
    $("mc-layer-box").hidden = true;
    showError("Not a config.json.", parsed.error);
    $("mc-status").textContent = T("Not a config.json.");
    return;
  }
  const config = parsed.config;
  const { data, family, modelType } = familyOf(registry, config);
  const plan = family ? layerPlan(registry, config) : null;
  if (!keepLayers) fillLayers(family ? layerOptions(config, plan) : [], select, plan);
  let spec = null;
  try {
    spec = ropeSpec(registry, config, selection());
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    const title = !modelType ? "No model_type." : !family ? "Unknown or unsupported family."
      : "This config cannot be read as it stands; what to fix:";
    showError(title, err.message);
  }
  showWarnings(warnings(registry, config, spec, state.published));
  if (!spec) {
    $("mc-status").textContent = T("Not read: see the message below.");
    return;
  }
  $("mc-describe").textContent = spec.describe();
  $("mc-head").textContent = T(headSource(registry, config, spec));
  showPlan(plan);
  if (spec.uses_rope) {
    showPairs(spec, contexts(data, spec, state.published));
  } else {
    $("mc-pairs-summary").textContent = T("This layer uses no RoPE: its queries and keys are not rotated, so it has no pairs.");
    $("mc-pairs").replaceChildren();
  }
  $("mc-pairs-wrap").hidden = !spec.uses_rope;
  $("mc-output").hidden = false;
  const label = registry.families[spec.family].label;
  $("mc-status").textContent = T(spec.layer !== null ? `Checked: ${label}, layer ${spec.layer}.` : `Checked: ${label}.`);
}

function showWarnings(list) {
  const box = $("mc-warnings");
  if (!list.length) return;
  box.append(el("h2", {}, T(`Warnings (${list.length})`)));
  const ul = el("ul", { class: "mc-warning-list" });
  // a warning's text is sentences of checks.js, each shown through the catalog
  for (const w of list) {
    ul.append(el("li", { "data-warning": w.id }, el("strong", {}, T(w.title) + (T.chinese ? "。" : ". ")),
      T.chinese ? w.parts.map(T).join("") : w.text));
  }
  box.append(ul);
}

function showPlan(plan) {
  const list = $("mc-plan");
  if (!plan) {
    list.replaceChildren(el("li", {}, T("The config lists no layer count: every layer is read the same way.")));
    return;
  }
  const items = plan.groups.map((g) => el("li", {},
    el("strong", {}, T(g.layers.length === 1 ? `layer ${ranges(g.layers)}` : `layers ${ranges(g.layers)}`) + (T.chinese ? "：" : ": ")),
    T(g.summary)));
  if (plan.shown < plan.count) items.push(el("li", {}, T(`(the first ${plan.shown} of ${plan.count} layers)`)));
  list.replaceChildren(...items);
}

function showPairs(spec, ctx) {
  const rows = pairTable(spec, ctx);
  const done = rows.filter((r) => r.turns_trained !== null && r.turns_trained >= 1).length;
  const moved = rows.filter((r) => r.moved).length;
  const still = rows.filter((r) => r.inv_freq === 0).length;
  const parts = [ctx.trained ? `Training context ${tokens(ctx.trained)} tokens (${ctx.source.trained}); maximum context ` +
    `${tokens(ctx.maximum)} tokens (${ctx.source.maximum}).` : "The config states no context length " +
    "(max_position_embeddings), so the turns over the training context are left out."];
  if (ctx.trained) {
    parts.push(`${done} of ${rows.length} pairs complete a full turn within the training context (at their unscaled ` +
      `frequency, as in pre-training); the other ${rows.length - done - still} see only an arc of their circle in training.`);
  }
  const atMax = spec.depends_on_length && ctx.maximum;
  parts.push(spec.rope_type === "default" ? "No scaling: every pair turns at b^(−2i/d)."
    : atMax ? `The ${spec.rope_type} scaling moves ${moved} of ${rows.length} pairs (ratio ≠ 1). It depends on the length: ` +
      `the table shows the frequencies at the maximum context, ${tokens(ctx.maximum)} tokens ` +
      "(up to the original context the model uses other ones; describe() above gives those)."
      : `The ${spec.rope_type} scaling moves ${moved} of ${rows.length} pairs (ratio ≠ 1).`);
  if (still) parts.push(`${still} pairs do not turn at all (proportional RoPE).`);
  $("mc-pairs-summary").textContent = T.chinese ? parts.map(T).join("") : parts.join(" ");
  const head = el("tr", {}, ...["pair i", "θ_i (rad/token)", "wavelength (tokens)", "ratio to plain", "turns in training (unscaled)", "turns at max"]
    .map((h) => el("th", { scope: "col" }, T(h))));
  const body = rows.map((r) => el("tr", r.moved ? { class: "mc-moved" } : {},
    el("th", { scope: "row" }, String(r.pair)), el("td", {}, num(r.inv_freq)), el("td", {}, num(r.wavelength)),
    el("td", {}, r.moved ? num(r.ratio) : "1"),
    el("td", {}, r.turns_trained === null ? "–" : r.turns_trained < 1 ? T(`${num(r.turns_trained)} (arc)`) : num(r.turns_trained)),
    el("td", {}, num(r.turns_max))));
  $("mc-pairs").replaceChildren(el("caption", {}, T("Every rotated pair of this layer")), el("thead", {}, head), el("tbody", {}, ...body));
}

setup();
