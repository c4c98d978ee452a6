// Reading paths that guide (_ext/reading_paths.py writes ROPE_PATHS above this line).
(() => {
  const root = document.documentElement.dataset.content_root || "";
  const here = new URL(window.location.href);
  const siteRoot = new URL(root, here);
  const stepUrl = (path, i) => {
    const step = path.steps[i];
    const [page, anchor] = step.url.split("#");
    const url = new URL(page, siteRoot);
    url.searchParams.set("path", path.slug);
    url.searchParams.set("step", String(i + 1));
    if (anchor) url.hash = anchor;
    return url.href;
  };
  const landing = new URL(ROPE_PATHS.landing, siteRoot);

  // The landing page: each step's links carry the path and the step.
  if (here.pathname === landing.pathname) {
    const section = document.getElementById(ROPE_PATHS.section);
    if (!section) return;
    for (const strong of section.querySelectorAll("p > strong")) {
      const path = ROPE_PATHS.paths.find((p) => p.name === strong.textContent.trim().replace(/\s+/g, " "));
      const ol = strong.parentElement.nextElementSibling;
      if (!path || !ol || ol.tagName !== "OL") continue;
      [...ol.children].forEach((li, i) => {
        for (const a of li.querySelectorAll("a[href]")) {
          const url = new URL(a.getAttribute("href"), here);
          url.searchParams.set("path", path.slug);
          url.searchParams.set("step", String(i + 1));
          a.setAttribute("href", url.href);
        }
      });
    }
    return;
  }

  // A page reached from a path: a bar under the heading the reader landed on.
  const path = ROPE_PATHS.paths.find((p) => p.slug === here.searchParams.get("path"));
  const index = Number(here.searchParams.get("step")) - 1;
  if (!path || !(index >= 0 && index < path.steps.length)) return;
  const nav = document.createElement("nav");
  nav.className = "rope-path";
  nav.setAttribute("aria-label", "Reading path");
  const link = (href, text, rel) => {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    if (rel) a.rel = rel;
    return a;
  };
  const head = document.createElement("p");
  head.className = "rope-path-head";
  head.append("Reading path: ");
  const name = link(`${landing.href.split("#")[0]}#${ROPE_PATHS.section}`, path.name);
  head.append(name, ` · step ${index + 1} of ${path.steps.length}`);
  const moves = document.createElement("p");
  moves.className = "rope-path-moves";
  if (index > 0) moves.append(link(stepUrl(path, index - 1), `← ${path.steps[index - 1].title}`, "prev"));
  if (index + 1 < path.steps.length) {
    moves.append(link(stepUrl(path, index + 1), `Next: ${path.steps[index + 1].title} →`, "next"));
  } else {
    moves.append(link(`${landing.href.split("#")[0]}#${ROPE_PATHS.section}`, "End of this path: back to all paths"));
  }
  nav.append(head, moves);
  const style = document.createElement("style");
  style.textContent = `
    nav.rope-path { border-left: 4px solid #0072B2; background: var(--pst-color-surface);
      padding: 0.5em 0.9em; margin: 0.4em 0 1.2em; border-radius: 4px; }
    nav.rope-path p { margin: 0.2em 0; }
    .rope-path-head { font-weight: 600; }
    .rope-path-moves { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 0.3em 1.5em; }
    .rope-path-moves a { display: inline-flex; align-items: center; min-height: 44px; }
    .rope-path-moves a[rel="next"] { margin-left: auto; }`;
  document.head.append(style);
  const target = here.hash ? document.getElementById(decodeURIComponent(here.hash.slice(1))) : null;
  // the target is a heading, a section, or a label's <span> at the top of its section
  const section = target && (target.matches("section") ? target : target.closest("section"));
  const heading = target && (target.matches("h1, h2, h3, h4") ? target
    : target.querySelector("h1, h2, h3, h4") || (section && section.querySelector("h1, h2, h3, h4")));
  const article = document.querySelector("article.bd-article") || document.body;
  if (heading) heading.after(nav);
  else article.prepend(nav);
})();
