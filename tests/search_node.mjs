// Runs a built site's search in Node, without a browser, for tests/test_editions.py: Sphinx's
// searchtools.js, then the site's language_data.js (its query splitter) and searchindex.js, in that
// order, as search.html loads them. Reads {scripts: [their paths], queries, pages} as JSON on stdin and
// writes, per query, the words it was cut into and the pages found, best first, and per page (a built
// HTML file) the text a result's snippet is taken from.
import { readFileSync } from "node:fs";
import vm from "node:vm";

const { scripts, queries, pages } = JSON.parse(readFileSync(0, "utf8"));
// just enough of a page for searchtools.js to load without searching on its own
globalThis.window = { addEventListener() {}, location: { search: "" } };
globalThis.document = { readyState: "loading", addEventListener() {}, getElementById: () => null, querySelectorAll: () => [] };
globalThis.localStorage = { setItem() {} };
globalThis.SPHINX_HIGHLIGHT_ENABLED = false;
globalThis.DOCUMENTATION_OPTIONS = {};
globalThis._ready = () => {};         // doctools.js: run once the page is ready (never, here)
globalThis._ = (text) => text;        // translations.js
// a page's main element as text (tags dropped), for Search.htmlToText
globalThis.DOMParser = class {
  parseFromString(html) {
    const start = html.indexOf('role="main"');
    const main = start < 0 ? "" : html.slice(html.indexOf(">", start) + 1);
    const text = main.replace(/<(script|style)\b[^]*?<\/\1>/g, "").replace(/<[^>]*>/g, "").replace(/\s+/g, " ");
    return { querySelectorAll: () => [], querySelector: (q) => (q === '[role="main"]' ? { textContent: text } : null) };
  }
};
for (const file of scripts) vm.runInThisContext(readFileSync(file, "utf8"), { filename: file });
const Search = vm.runInThisContext("Search");
const results = queries.map((query) => {
  const [q, terms, excluded, highlight, objects] = Search._parseQuery(query);
  const found = Search._performSearch(q, terms, excluded, highlight, objects);
  // searchtools.js shows the last result first
  return { query, words: [...terms], pages: [...new Set(found.reverse().map((r) => r[0]))] };
});
const texts = (pages || []).map((file) => Search.htmlToText(readFileSync(file, "utf8")).trim());
process.stdout.write(JSON.stringify({ results, texts }));
