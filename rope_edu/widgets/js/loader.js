// rope-edu figure loader for the static book: mounts every figure placeholder on the page.
// Each placeholder (written by rope_edu.widgets.Figure.html) carries the live widget's traits as
// JSON (its controls, default state and data); this script imports the figure's module from the
// same folder and calls its `render` with a small stand-in for the widget model (get / set / on /
// off / save_changes).

// The page's language (<html lang>) chooses the figures' words: a Chinese page loads the catalog
// rope_edu/locales/zh_CN.json, served beside this file as messages.zh_CN.json (rope_edu.i18n).
const LANG = (document.documentElement.lang || "en").toLowerCase();
const FILE = LANG.startsWith("zh")
  ? fetch(new URL("messages.zh_CN.json", import.meta.url)).then((r) => r.json())
    .catch((err) => { console.error(`rope-edu figures: no Chinese catalog (${err})`); return {}; })
  : Promise.resolve({});
const CATALOG = FILE.then((c) => c.messages || {});

/**
 * The page's words for the site's scripts other than the figures (the "Check your model" page,
 * _ext/model_check/page.js): resolves to a function from an English string (a catalog key, values
 * filled in) to the page's language, matched as the figures match it (core.js's tr); on an English
 * page, the identity. `chinese`: whether the page is Chinese (its punctuation).
 */
export async function translator() {
  // the figures' messages and the page's own ("page messages": what no figure draws)
  const file = await FILE;
  const messages = { ...(file.messages || {}), ...(file["page messages"] || {}) };
  if (!Object.keys(messages).length) return Object.assign((s) => s, { chinese: false });
  const { compileMessages, tr } = await import(new URL("core.js", import.meta.url));
  const compiled = compileMessages(messages);
  return Object.assign((s) => tr(s, compiled), { chinese: true });
}

// The payload is the live widget's traits by name (Figure._payload), so the stand-in holds it as
// it is; only the catalog (_messages) is the page's.
function standInModel(payload, messages) {
  const values = { ...payload, _messages: messages };
  const listeners = new Map();
  return {
    get: (key) => values[key],
    set(key, value) {
      if (values[key] === value) return;
      values[key] = value;
      for (const f of listeners.get(`change:${key}`) || []) f();
    },
    on(event, f) {
      if (!listeners.has(event)) listeners.set(event, []);
      listeners.get(event).push(f);
    },
    off(event, f) {
      const list = listeners.get(event) || [];
      const i = list.indexOf(f);
      if (i >= 0) list.splice(i, 1);
    },
    save_changes() {},
    send() {},
  };
}

async function mount(host) {
  const payload = JSON.parse(host.dataset.payload);
  const [module, messages] = await Promise.all([import(new URL(`${payload._name}.js`, import.meta.url)), CATALOG]);
  host.removeAttribute("data-payload");
  module.default.render({ model: standInModel(payload, messages), el: host });
  host.classList.add("rope-fig-ready");
}

// A keyboard reader should not need hundreds of Tab presses to reach a figure: after the theme's
// "Skip to main content" link, one link per figure ("Skip to figure: <title>") moves focus to the
// figure's first control. Like the theme's skip link, it shows only while it has focus.
function skipLinks(hosts, messages) {
  const skip = messages["Skip to figure: {0}"] || "Skip to figure: {0}";
  const anchor = document.getElementById("pst-skip-link") || document.querySelector(".skip-link");
  if (!anchor || !hosts.length) return;
  let after = anchor;
  hosts.forEach((host, i) => {
    if (!host.id) host.id = `rope-figure-${i + 1}`;
    const wrap = document.createElement("div");
    wrap.className = "skip-link rope-fig-skip d-print-none";
    const link = document.createElement("a");
    link.href = `#${host.id}`;
    link.textContent = skip.replace("{0}", host.getAttribute("aria-label") || host.dataset.figure);
    link.addEventListener("click", (e) => {
      const first = host.querySelector("[data-control]");
      if (!first) return;
      e.preventDefault();
      host.scrollIntoView({ block: "start" });
      first.focus();
    });
    wrap.appendChild(link);
    after.after(wrap);
    after = wrap;
  });
}

const hosts = [...document.querySelectorAll(".rope-fig-static[data-figure]")];
Promise.allSettled(hosts.map((host) =>
  mount(host).catch((err) => {
    host.classList.add("rope-fig-error");
    console.error(`rope-edu figure ${host.dataset.figure}: ${err}`);
  }),
)).then(async () => skipLinks(hosts.filter((h) => h.classList.contains("rope-fig-ready")), await CATALOG));
