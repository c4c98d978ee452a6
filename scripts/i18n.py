"""The Chinese edition: one source (the English chapters), gettext catalogs under locales/zh_CN/.

    python scripts/i18n.py update        # after the English changed: refresh the catalogs, list what to translate
                                         # (the pages' and outputs.po, the built English chapters' plot captions,
                                         # alt texts, table captions and headers)
    python scripts/i18n.py check         # untranslated or fuzzy messages, and translations that changed the maths,
                                         # roles, code spans, link targets or numbers of their English message
    python scripts/i18n.py build         # the Chinese site into _build/html/zh (make book runs it after the English)
    python scripts/i18n.py font          # the figures' Chinese font, cut to the catalog's characters (fonts-noto-cjk)

Messages are Sphinx's: one paragraph, list item, heading or theorem title each, in MyST source
(roles, ``$...$``, backticks), parsed again after translation. Display maths blocks are messages
too; ``update`` fills them with their own text (maths is not translated). The Chinese build reads
the English build's executed outputs from the same jupyter-cache (nothing runs twice) and, once
built, shares every static file and image that is byte-for-byte the English one.

One concern a module beside this command line: i18n_common (paths, the term table), i18n_catalogs
(update), i18n_outputs (the English build's outputs as messages), i18n_gate (check), i18n_site (build),
i18n_fonts (font, the plots' SVG labels), i18n_strings (the figures' strings).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# One concern a module (all under scripts/, importable by these names); this one is the command line
# and keeps every name its modules define reachable as ``i18n.<name>``, as before the split.
from i18n_catalogs import fill_glossary, tidy, update  # noqa: F401
from i18n_common import LANG, LOCALES, OUTPUTS, ROOT, SEARCH_DICT, SUBDIR, TERMS, _is_math, load_terms, save_if_changed  # noqa: F401
from i18n_fonts import NOTO_CJK, cjk_characters, make_font, svg_font_problems, translate_svg  # noqa: F401
from i18n_gate import (  # noqa: F401
    _prose, check, check_figures, check_outputs, figure_problems, font_problems, grouping_problems,
    maths_labels, markup_problems, plot_labels, plot_strings, problems, term_problems)
from i18n_outputs import check_claims, output_messages, outputs_pot, printed_texts, update_outputs  # noqa: F401
from i18n_site import ZH_INPUTS, build, config, inputs_key, write_search_dict  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["update", "check", "build", "font"])
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.command == "update":
        return update(args.root)
    if args.command == "check":
        return check(args.root)
    if args.command == "font":
        return make_font(args.root)
    return build(args.root)


if __name__ == "__main__":
    sys.exit(main())
