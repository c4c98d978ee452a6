"""Reading paths that guide: a page reached from a reading path says which path and which step.

The landing page lists reading paths (a bold name, then a numbered list of sections, see
``book/intro.md``). After the build this extension reads those lists from the built landing page
and writes ``_static/rope_paths/paths.js``: the paths as data, and a small script that

* on the landing page, adds ``?path=<slug>&step=<n>`` to each step's links, and
* on a page opened with those parameters, puts a bar under the heading the reader landed on:
  the path's name, "step 2 of 5", and links to the previous and next steps (which carry the
  parameters on) and back to the list of paths.

Without JavaScript the links work as plain links. Nothing is fetched: the data is in the script.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

from bs4 import BeautifulSoup
from sphinx.application import Sphinx

FOLDER = "rope_paths"
SCRIPT = Path(__file__).with_name("reading_paths") / "paths.js"
SECTION_ID = "reading-paths"


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def read_paths(html: str, page: str) -> list[dict]:
    """The reading paths of the built landing page ``page`` (its path from the site's root):
    ``[{"slug", "name", "steps": [{"title", "url"}]}]``, each url from the site's root."""
    section = BeautifulSoup(html, "html.parser").find("section", id=SECTION_ID)
    if section is None:
        return []
    here = posixpath.dirname(page)
    paths = []
    for strong in section.select("p > strong"):
        ol = strong.parent.find_next_sibling()
        if ol is None or ol.name != "ol":
            continue
        name = strong.get_text(" ", strip=True)
        steps = []
        for li in ol.find_all("li", recursive=False):
            link = li.find("a", href=True)
            if link is None:
                continue
            url = posixpath.normpath(posixpath.join(here, link["href"].split("#")[0]))
            anchor = link["href"].split("#", 1)[1] if "#" in link["href"] else ""
            # the item's text as written (get_text with a separator would put a space before the
            # comma after a link: "form a pair , how many rotate")
            title = re.sub(r"\s*\(chapter \d+\)\s*$", "", " ".join(li.get_text().split()))
            steps.append({"title": " ".join(title.split()), "url": url + ("#" + anchor if anchor else ""),
                          "chapter": (re.search(r"\(chapter (\d+)\)", li.get_text()) or [None, None])[1]})
        paths.append({"slug": slug(name), "name": name, "steps": steps})
    return paths


def _add_assets(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.add_js_file(f"{FOLDER}/paths.js", loading_method="defer")


def _write(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    page = app.builder.get_target_uri(app.config.root_doc)
    landing = outdir / page
    paths = read_paths(landing.read_text(encoding="utf-8"), page) if landing.is_file() else []
    data = {"landing": page, "section": SECTION_ID, "paths": paths}
    out = outdir / "_static" / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    (out / "paths.js").write_text(
        f"const ROPE_PATHS = {json.dumps(data, ensure_ascii=False)};\n" + SCRIPT.read_text(encoding="utf-8"),
        encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _add_assets)
    app.connect("build-finished", _write, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
