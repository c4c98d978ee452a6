// rope-edu figure loader for the static book: mounts every figure placeholder on the page.
// Each placeholder (written by rope_edu.widgets.Figure.html) carries its controls, default state
// and data as JSON; this script imports the figure's module from the same folder and calls its
// `render` with a small stand-in for the widget model (get / set / on / off / save_changes).

function standInModel(payload) {
  const values = { ...payload.state, _name: payload.name, _title: payload.title, _controls: payload.controls, _data: payload.data, _defaults: payload.defaults };
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
  const module = await import(new URL(`${payload.name}.js`, import.meta.url));
  host.removeAttribute("data-payload");
  module.default.render({ model: standInModel(payload), el: host });
  host.classList.add("rope-fig-ready");
}

for (const host of document.querySelectorAll(".rope-fig-static[data-figure]")) {
  mount(host).catch((err) => {
    host.classList.add("rope-fig-error");
    console.error(`rope-edu figure ${host.dataset.figure}: ${err}`);
  });
}
