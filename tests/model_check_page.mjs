// Runs the "Check your model" page's own script (_ext/model_check/page.js, as the built site serves it)
// in Node with a small stand-in for the page's DOM, for tests/test_model_check.py: reads {site, lang, cases}
// as JSON on stdin (site: a folder holding _static/model_check/ and _static/rope_figures/; a case: {config}
// (text pasted in the box) or {published} (an index into the picker)) and writes, per case, what the page
// shows: the text of each shown element, and apart the text of elements marked lang="en".
import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const { site, lang, cases } = JSON.parse(readFileSync(0, "utf8"));

class Element {
  constructor(tag, id = null) {
    Object.assign(this, { tag, id, attrs: {}, children: [], hidden: false, value: "", lang: "", listeners: {} });
  }
  setAttribute(key, value) {
    this.attrs[key] = String(value);
    if (key === "lang") this.lang = String(value);
  }
  append(...nodes) { for (const n of nodes) this.children.push(typeof n === "string" ? { text: n } : n); }
  replaceChildren(...nodes) { this.children = []; this.append(...nodes); }
  set textContent(text) { this.children = [{ text: String(text) }]; }
  get textContent() { return this.children.map((c) => ("text" in c ? c.text : c.textContent)).join(""); }
  addEventListener(type, f) { (this.listeners[type] ||= []).push(f); }
  dispatchEvent(event) { for (const f of this.listeners[event.type] || []) f(event); }
}

const FORM = ["mc-form", "mc-published", "mc-config", "mc-layer-box", "mc-layer", "mc-check", "mc-status", "mc-source",
  "mc-error", "mc-warnings", "mc-output", "mc-describe-note", "mc-describe", "mc-head", "mc-plan", "mc-pairs-summary", "mc-pairs-wrap", "mc-pairs"];
const byId = new Map(FORM.map((id) => [id, new Element("div", id)]));
for (const id of ["mc-layer-box", "mc-error", "mc-output", "mc-source", "mc-describe-note"]) byId.get(id).hidden = true;
globalThis.document = {
  documentElement: { lang },
  getElementById: (id) => byId.get(id) ?? null,
  createElement: (tag) => new Element(tag),
  querySelector: () => null,
  querySelectorAll: () => [],
};
globalThis.location = { search: "" };
globalThis.window = { addEventListener() {} };   // core.js installs a keyboard listener on load
globalThis.fetch = async (url) => ({ json: async () => JSON.parse(readFileSync(fileURLToPath(url), "utf8")) });

await import(pathToFileURL(`${site}/_static/model_check/page.js`).href);
const $ = (id) => byId.get(id);

/** The shown text of an element, by kind: [{text, en}] (en: inside an element marked lang="en"). */
function texts(node, en = false, out = []) {
  if ("text" in node) {
    if (node.text.trim()) out.push({ text: node.text, en });
    return out;
  }
  if (node.hidden) return out;
  const english = en || node.lang === "en";
  const own = node.children.filter((c) => "text" in c).map((c) => c.text).join("");
  if (node.children.every((c) => "text" in c)) {
    if (own.trim()) out.push({ text: own, en: english });
    return out;
  }
  for (const child of node.children) texts(child, english, out);
  return out;
}

const published = [...$("mc-published").children].map((o) => o.textContent);
const results = cases.map((c) => {
  if (c.published !== undefined) {
    $("mc-published").value = String(c.published);
    $("mc-published").dispatchEvent(new Event("change"));
  } else {
    $("mc-config").value = c.config;
    $("mc-config").dispatchEvent(new Event("input"));
    $("mc-check").dispatchEvent(new Event("click"));
  }
  const shown = [];
  const output = $("mc-output").hidden ? [] : ["mc-describe-note", "mc-describe", "mc-head", "mc-plan", "mc-pairs-summary",
    ...($("mc-pairs-wrap").hidden ? [] : ["mc-pairs"])];
  for (const id of ["mc-status", "mc-source", "mc-error", "mc-warnings", ...output]) {
    if (!$(id).hidden) shown.push(...texts($(id)).map((t) => ({ ...t, where: id })));
  }
  // the layer picker's options, where the model's layers differ
  if (!$("mc-layer-box").hidden) shown.push(...$("mc-layer").children.map((o) => ({ text: o.textContent, en: false, where: "mc-layer" })));
  return shown;
});
process.stdout.write(JSON.stringify({ published, results }));
