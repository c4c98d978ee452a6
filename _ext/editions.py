"""Two editions, one source: every page links to the same page in the other language.

The English site is ``_build/html``; the Chinese one, built from the same sources through the
gettext catalogs in ``locales/zh_CN`` (``scripts/i18n.py``), is ``_build/html/zh``. Each page
gets, in its static HTML (no JavaScript needed), ``<link rel="alternate" hreflang>`` for both
editions and a visible link to the other one above its title.
"""

from __future__ import annotations

from html import escape

from sphinx.application import Sphinx

#: (hreflang, name shown to readers, folder under the English site)
EDITIONS = (("en", "English", ""), ("zh-CN", "中文", "zh/"))


def _edition(app: Sphinx) -> str:
    return "zh-CN" if (app.config.language or "en").lower().startswith("zh") else "en"


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if app.builder.format != "html":
        return
    mine = _edition(app)
    root = context.get("content_root", "")
    folder = dict((lang, sub) for lang, _, sub in EDITIONS)[mine]
    up = "../" * folder.count("/")          # from this edition's root to the English root
    base = (app.config.html_baseurl or "").rstrip("/")
    if folder and base.endswith("/" + folder.rstrip("/")):
        base = base[: -len(folder.rstrip("/")) - 1]
    page = f"{pagename}.html"
    links, switch = [], []
    for lang, name, sub in EDITIONS:
        href = f"{base}/{sub}{page}" if base else f"{root}{up}{sub}{page}"
        links.append(f'<link rel="alternate" hreflang="{lang}" href="{escape(href)}">')
        if lang != mine:
            local = f"{root}{up}{sub}{page}"
            label = "Read this page in English" if lang == "en" else "阅读本页中文版"
            switch.append(f'<a class="rope-edition" href="{escape(local)}" hreflang="{lang}" lang="{lang}">{label}</a>')
    context["metatags"] = context.get("metatags", "") + "\n" + "\n".join(links)
    context["body"] = f'<p class="rope-editions" style="text-align: right; margin: 0">{" ".join(switch)}</p>\n' + context.get("body", "")


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", _page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
