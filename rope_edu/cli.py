"""``rope-edu``: check a model's RoPE from the command line, as the book's "Check your model" page does.

::

    rope-edu check PATH [--json] [--layer N | --layer-type T]
    rope-edu diff A B [--json] [--tol RAD] [--max-position N] [--layer N | --layer-type T]
    python -m rope_edu check PATH

``PATH`` is a ``config.json``, a model folder holding one, or a ``.gguf`` file (its metadata only,
:mod:`rope_edu.gguf_config`). ``check`` prints what the page shows: the family and how the file was
read, :meth:`rope_edu.RopeSpec.describe`, where the head size comes from, the layer plan, the pairs'
wavelengths against the training and maximum context, and every warning
(:mod:`rope_edu.model_check`, the page's sentences). ``diff`` computes the angles two files give the
same positions and says in words which settings differ. Exit codes: ``check`` 0 read cleanly, 1 with
warnings; ``diff`` 0 when the two agree, 1 when they differ; both 2 when a file cannot be read (one
line on stderr naming the file and the field, never a traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import model_check as C
from .models import FAMILIES, RopeSpec, rope_spec

__all__ = ["EXIT_CLEAN", "EXIT_FLAGGED", "EXIT_UNREADABLE", "Unreadable", "Model", "load", "check_report",
           "diff_report", "main"]

EXIT_CLEAN, EXIT_FLAGGED, EXIT_UNREADABLE = 0, 1, 2
#: Angles (rad) two files may differ by and still agree (float64 rounding at a million positions is ~1e-10).
DEFAULT_TOL = 1e-6
#: Positions diff compares: every one up to DENSE, then SAMPLED evenly spaced up to the maximum context.
DENSE, SAMPLED = 2048, 2048
#: Positions diff compares when neither file states a context length.
FALLBACK_CONTEXT = 4096
_WIDTH = 100


class Unreadable(Exception):
    """A file that cannot be read as a model config; the message names the file and the field."""


@dataclass
class Model:
    """A file read as a config, with the spec ``rope_spec`` makes of it and everything the page adds."""

    path: str
    kind: str                  # "config.json" or "gguf"
    read_as: str
    config: dict
    spec: RopeSpec
    select: dict
    plan: dict | None
    notes: tuple[str, ...] = ()
    file_warnings: tuple[dict, ...] = ()
    gguf_keys: dict = field(default_factory=dict)

    @property
    def data(self) -> dict:
        """The language model's config (a multimodal wrapper's text_config)."""
        return C.family_of(self.config)[0] or self.config

    @property
    def contexts(self) -> dict:
        return C.contexts(self.data, self.spec)

    @property
    def warnings(self) -> list[dict]:
        """The page's warnings, then what the GGUF reader found."""
        found = C.warnings(self.config, self.spec)
        return found + [{**w, "parts": [w["text"]]} for w in self.file_warnings]


# --- reading ---------------------------------------------------------------------------------------


def _read_file(path: Path) -> tuple[str, dict, str, tuple[str, ...], tuple[dict, ...], dict]:
    """(kind, config, read_as, notes, warnings, gguf keys) of a config.json, a folder holding one, or a GGUF file."""
    from .gguf_config import is_gguf, read_gguf_config

    if path.is_dir():
        inner = path / "config.json"
        if not inner.is_file():
            ggufs = sorted(p.name for p in path.glob("*.gguf"))
            hint = f"; pass one of its GGUF files ({', '.join(ggufs[:3])})" if ggufs else ""
            raise Unreadable(f"{path}: a folder without a config.json{hint}")
        path = inner
    if not path.exists():
        raise Unreadable(f"{path}: no such file")
    if is_gguf(path):
        try:
            read = read_gguf_config(path)
        except (ValueError, TypeError, OSError, ModuleNotFoundError) as err:
            raise Unreadable(str(err)) from None
        how = (f"GGUF metadata ({len(read.keys)} keys, no tensor loaded): general.architecture {read.architecture!r} "
               f"read as a config.json of model_type {read.config['model_type']!r}")
        return "gguf", read.config, how, read.notes, read.warnings, read.keys
    if path.suffix.lower() == ".gguf":
        raise Unreadable(f"{path}: not a GGUF file (it does not start with the bytes 'GGUF')")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise Unreadable(f"{path}: neither JSON text nor a GGUF file, so not a config.json") from None
    except OSError as err:
        raise Unreadable(f"{path}: cannot be read ({err.strerror or err})") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as err:
        raise Unreadable(f"{path}: not JSON, so not a config.json ({err.msg} at line {err.lineno}, column "
                         f"{err.colno})") from None
    if not isinstance(config, dict):
        what = "a list" if isinstance(config, list) else "null" if config is None else f"a {type(config).__name__}"
        raise Unreadable(f"{path}: this JSON is {what}; a config.json is one object, {{\"model_type\": ..., ...}}")
    return "config.json", config, _how_config(config), (), (), {}


def _how_config(config: Mapping[str, Any]) -> str:
    data, model_type, _ = C.family_of(config)
    parts = ["a config.json"]
    if data is not None and data is not config and config.get("model_type") != model_type:
        parts.append(f"the language model of a {config.get('model_type')!r} config (model_type {model_type!r})")
    used: Mapping[str, Any] = data or config
    fields = [k for k in ("rope_parameters", "rope_scaling", "rope_theta") if used.get(k) is not None]
    if "rope_parameters" in fields:
        parts.append("transformers 5's rope_parameters" + (" and transformers 4's fields" if len(fields) > 1 else ""))
    elif fields:
        parts.append("transformers 4's fields (" + ", ".join(fields) + ")")
    else:
        parts.append("no RoPE fields (the family's defaults)")
    return "; ".join(parts)


def _short(message: str) -> str:
    """rope_spec's message without its list of every supported model_type (as the page folds it)."""
    cut = message.find("; supported: ")
    return message if cut < 0 else message[:cut] + " (rope_edu.models.MODEL_TYPES lists the supported ones)"


def load(path: Any, *, layer: int | None = None, layer_type: str | None = None) -> Model:
    """Read ``path`` and make its spec, at ``layer``/``layer_type`` or where the page opens it.

    Raises
    ------
    Unreadable
        The file cannot be read, or rope_spec refuses its config (the message names the file and the field).
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got {type(path).__name__}")
    path = Path(path)
    kind, config, how, notes, found, keys = _read_file(path)
    select: dict[str, Any] = {}
    if layer is not None:
        select["layer"] = layer
    if layer_type is not None:
        select["layer_type"] = layer_type
    try:
        plan = C.layer_plan(config)
        if not select:
            select = C.default_select(config, plan)
        spec = rope_spec(dict(config), **select)
    except (ValueError, TypeError) as err:
        hint = " (rope-edu: pass --layer N or --layer-type T)" if "layer_type" in str(err) and not select else ""
        raise Unreadable(f"{path}: {_short(str(err))}{hint}") from None
    return Model(path=str(path), kind=kind, read_as=how, config=config, spec=spec, select=select, plan=plan,
                 notes=notes, file_warnings=found, gguf_keys=keys)


# --- check -----------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """JSON data: mappings and tuples become dicts and lists, numpy numbers Python's, infinities None."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a Default record
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _spec_json(spec: RopeSpec) -> dict:
    out = {f.name: _plain(getattr(spec, f.name)) for f in dataclasses.fields(spec)}
    out["label"] = FAMILIES[spec.family].label
    out["depends_on_length"] = spec.depends_on_length
    return out


def check_report(model: Model) -> dict:
    """Everything ``rope-edu check`` prints, as JSON data."""
    spec, ctx = model.spec, model.contexts
    rows = C.pair_table(spec, ctx) if spec.uses_rope else []
    warnings = model.warnings
    return {
        "path": model.path, "kind": model.kind, "read_as": model.read_as, "notes": list(model.notes),
        "gguf_keys": _plain(model.gguf_keys), "select": model.select, "config": _plain(model.config),
        "spec": _spec_json(spec), "describe": spec.describe(), "head": C.head_source(model.config, spec),
        "plan": model.plan, "contexts": ctx,
        "pairs_summary": C.pairs_summary(spec, ctx, rows) if spec.uses_rope else [],
        "pairs": _plain(rows),
        "warnings": [{k: w[k] for k in ("id", "title", "text")} for w in warnings],
        "status": "warnings" if warnings else "clean",
    }


def _wrap(text: str, indent: str = "  ", first: str | None = None) -> str:
    return textwrap.fill(text, _WIDTH, initial_indent=indent if first is None else first, subsequent_indent=indent,
                         break_on_hyphens=False, break_long_words=False)


def _n(x: float | None) -> str:
    """4 significant digits; large numbers grouped (11,970), as the page's table writes them."""
    if x is None:
        return "–"
    if not math.isfinite(x):
        return "∞"
    if 1e4 <= abs(x) < 1e15:
        return f"{float(C.fmt_g(x, 4)):,.0f}"
    return C.fmt_g(x, 4)


def format_check(report: dict) -> str:
    """The plain text of ``rope-edu check``."""
    spec = report["spec"]
    where = f", layer {spec['layer']}" if spec["layer"] is not None else ""
    out = [report["path"], _wrap(f"{report['read_as']}.", first="  read as ", indent="    ")]
    out += [_wrap(f"{note}.", first="  note: ", indent="    ") for note in report["notes"]]
    out += ["", f"What the code does{where}:", report["describe"]]
    if report["head"]:
        out.append(_wrap(report["head"], first="Head size: ", indent="  "))
    out += ["", "Layer plan:"]
    plan = report["plan"]
    if plan is None:
        out.append("  The config lists no layer count: every layer is read the same way.")
    else:
        for g in plan["groups"]:
            name = "layer" if len(g["layers"]) == 1 else "layers"
            out.append(_wrap(g["summary"], first=f"  {name} {C.ranges(g['layers'])}: ", indent="      "))
        if plan["shown"] < plan["count"]:
            out.append(f"  (the first {plan['shown']} of {plan['count']} layers)")
    out += ["", "Pairs:"]
    if not report["pairs"]:
        out.append("  This layer uses no RoPE: its queries and keys are not rotated, so it has no pairs.")
    else:
        out.append(_wrap(" ".join(report["pairs_summary"])))
        head = ("pair", "θ_i (rad/token)", "wavelength", "ratio to plain", "turns in training", "turns at max")
        rows = [head] + [(str(r["pair"]), _n(r["inv_freq"]), _n(r["wavelength"]),
                          _n(r["ratio"]) if r["moved"] else "1",
                          "–" if r["turns_trained"] is None else
                          _n(r["turns_trained"]) + (" (arc)" if r["turns_trained"] < 1 else ""),
                          _n(r["turns_max"])) for r in report["pairs"]]
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        for r in rows:
            out.append("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip() +
                       ("  *" if r is not head and r[3] != "1" else ""))
        if any(r["moved"] for r in report["pairs"]):
            out.append("  (* moved by the scaling)")
    warnings = report["warnings"]
    out.append("")
    if warnings:
        out.append(f"Warnings ({len(warnings)}):")
        for w in warnings:
            out.append(_wrap(f"{w['title']}. {w['text']}", first="  - ", indent="    "))
    else:
        out.append("No warnings.")
    return "\n".join(out)


# --- diff ------------------------------------------------------------------------------------------


def _positions(maximum: int) -> np.ndarray:
    """Every position below DENSE, then SAMPLED evenly spaced ones up to ``maximum - 1``."""
    dense = np.arange(min(maximum, DENSE))
    spread = np.linspace(0, maximum - 1, SAMPLED).round().astype(np.int64)
    return np.unique(np.concatenate([dense, spread]))


def _angles(spec: RopeSpec, positions: np.ndarray) -> np.ndarray:
    """Angle of every pair at every position, shape (positions, pairs), with the sign the code turns by.

    A length-dependent scaling (dynamic NTK, LongRoPE) takes, at position m, the frequencies of a
    sequence of m + 1 tokens (what the model uses there when it reads the sequence from the start).
    """
    sign = -1.0 if spec.clockwise else 1.0
    pos = positions.astype(np.float64)
    if not spec.depends_on_length:
        return sign * pos[:, None] * spec.inv_freq()[None, :]
    freqs: dict[bytes, np.ndarray] = {}
    rows = []
    for m in positions.tolist():
        inv = spec.inv_freq(m + 1)
        key = inv.tobytes()
        inv = freqs.setdefault(key, inv)
        rows.append(m * inv)
    return sign * np.array(rows)


def _pairs_of(spec: RopeSpec) -> str:
    r, start = spec.rotary_dim, spec.rotary_offset
    if spec.layout == "half":
        return f"half-split pairs ({start} + i, {start} + i + {r // 2})" if start else f"half-split pairs (i, i + {r // 2})"
    return f"interleaved pairs ({start} + 2i, {start} + 2i + 1)" if start else "interleaved pairs (2i, 2i + 1)"


def _v(x: Any) -> str:
    if x is None:
        return "none"
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return C.grouped(x) if abs(x) >= 1e4 and x == int(x) else C.fmt_g(x, 6)
    return repr(x) if isinstance(x, str) else str(x)


def _settings(a: Model, b: Model) -> list[str]:
    """One sentence per setting that differs between the two specs."""
    sa, sb = a.spec, b.spec
    out = []
    if sa.family != sb.family:
        out.append(f"family: A is {FAMILIES[sa.family].label} (model_type {sa.model_type!r}), B is "
                   f"{FAMILIES[sb.family].label} (model_type {sb.model_type!r}).")
    if sa.uses_rope != sb.uses_rope:
        which, other = ("A", "B") if sa.uses_rope else ("B", "A")
        out.append(f"RoPE: {which} rotates this layer's queries and keys, {other} does not "
                   f"({(sb if sa.uses_rope else sa).no_rope_reason or 'NoPE layer'}).")
        return out
    if not sa.uses_rope:
        return out
    if sa.head_dim != sb.head_dim:
        out.append(f"head size: A {sa.head_dim} dims, B {sb.head_dim}.")
    if (sa.rotary_dim, sa.rotary_offset) != (sb.rotary_dim, sb.rotary_offset):
        out.append(f"rotated dims: A rotates {sa.rotary_dim} of {sa.head_dim} (from coordinate {sa.rotary_offset}), "
                   f"B {sb.rotary_dim} of {sb.head_dim} (from {sb.rotary_offset}): pair i has frequency "
                   f"b^(-2i/{sa.rotary_dim}) in A and b^(-2i/{sb.rotary_dim}) in B.")
    if (sa.layout, sa.output_layout) != (sb.layout, sb.output_layout):
        out.append(f"layout: A rotates {_pairs_of(sa)}, B {_pairs_of(sb)}: the same angles turn other coordinates, "
                   "so the query and key rows must be permuted to match.")
    if sa.base != sb.base:
        out.append(f"base: A {C.grouped(sa.base)}, B {C.grouped(sb.base)}.")
    if sa.rope_type != sb.rope_type:
        name = lambda s: "'default' (none)" if s == "default" else repr(s)  # noqa: E731
        out.append(f"scaling type: A {name(sa.rope_type)}, B {name(sb.rope_type)}.")
    pa, pb = dict(sa.rope_params), dict(sb.rope_params)
    labels = {"factor": "factor", "original_max_position_embeddings": "original length (trained context)"}
    for key in ["factor", "original_max_position_embeddings", *sorted((set(pa) | set(pb)) - set(labels))]:
        va, vb = pa.get(key), pb.get(key)
        if va != vb and not (isinstance(va, (int, float)) and isinstance(vb, (int, float)) and float(va) == float(vb)):
            short = lambda v: f"[{len(v)} values]" if isinstance(v, (tuple, list)) else _v(v)  # noqa: E731
            out.append(f"{labels.get(key, f'scaling parameter {key}')}: A {short(va)}, B {short(vb)}.")
    if not math.isclose(sa.attention_factor, sb.attention_factor, rel_tol=1e-12):
        out.append(f"attention factor on cos and sin: A {C.fmt_g(sa.attention_factor)}, "
                   f"B {C.fmt_g(sb.attention_factor)}.")
    if sa.clockwise != sb.clockwise:
        out.append(f"direction: A turns pairs {'clockwise' if sa.clockwise else 'counter-clockwise'}, "
                   f"B {'clockwise' if sb.clockwise else 'counter-clockwise'}.")
    ma, mb = a.contexts["maximum"], b.contexts["maximum"]
    if ma != mb:
        out.append(f"maximum context: A {_v(ma) if ma is None else C.grouped(ma)} tokens, "
                   f"B {_v(mb) if mb is None else C.grouped(mb)}.")
    return out


def diff_report(a: Model, b: Model, *, tol: float = DEFAULT_TOL, max_position: int | None = None) -> dict:
    """What ``rope-edu diff`` finds: the settings that differ, in words, and the angles' differences.

    Parameters
    ----------
    a, b : Model
        From :func:`load`.
    tol : float
        Angles (rad) closer than this agree.
    max_position : int, optional
        Compare positions ``0 .. max_position - 1``; default: the larger maximum context of the two.

    Returns
    -------
    dict
        ``settings`` (sentences), ``positions`` (how many, the largest, whether sampled), ``pairs``
        (per pair: largest angle difference and the first position past ``tol``), ``first_position``
        (the earliest of those, or None), ``agree``.
    """
    if not (isinstance(tol, (int, float)) and 0 < tol < math.pi):
        raise ValueError(f"tol must be a number of radians in (0, π), got {tol!r}")
    settings = _settings(a, b)
    maximum = max_position or max(a.contexts["maximum"] or 0, b.contexts["maximum"] or 0) or FALLBACK_CONTEXT
    positions = _positions(int(maximum))
    pairs: list[dict] = []
    first = None
    if a.spec.uses_rope and b.spec.uses_rope:
        ang_a, ang_b = _angles(a.spec, positions), _angles(b.spec, positions)
        n = min(ang_a.shape[1], ang_b.shape[1])
        delta = np.abs((ang_a[:, :n] - ang_b[:, :n] + np.pi) % (2 * np.pi) - np.pi)
        constant = not (a.spec.depends_on_length or b.spec.depends_on_length)
        step = (np.abs(a.spec.inv_freq()[:n] - b.spec.inv_freq()[:n]) if constant else None)
        for i in range(n):
            past = np.flatnonzero(delta[:, i] > tol)
            at = int(positions[past[0]]) if past.size else None
            if step is not None and step[i] > 0:
                # the angles part at a steady rate: the first position past tol, exactly
                exact = math.floor(tol / step[i]) + 1
                at = exact if exact < maximum else None
            pairs.append({"pair": i, "largest": float(delta[:, i].max()), "first_position": at})
        firsts = [p["first_position"] for p in pairs if p["first_position"] is not None]
        first = min(firsts) if firsts else None
    differ_angles = first is not None or any(p["largest"] > tol for p in pairs)
    return {
        "a": a.path, "b": b.path, "settings": settings, "tol": tol,
        "positions": {"count": int(positions.size), "max": int(positions[-1]), "dense_until": int(min(maximum, DENSE)),
                      "sampled": bool(positions.size < maximum)},
        "pairs": pairs, "first_position": first,
        "pairs_differing": sum(p["first_position"] is not None or p["largest"] > tol for p in pairs),
        "agree": not settings and not differ_angles,
    }


def format_diff(report: dict, a: Model, b: Model) -> str:
    """The plain text of ``rope-edu diff``."""
    out = []
    for name, m in (("A", a), ("B", b)):
        where = f", layer {m.spec.layer}" if m.spec.layer is not None else ""
        out.append(f"{name}: {m.path}")
        out.append(_wrap(f"{m.read_as}; {FAMILIES[m.spec.family].label}{where}.", first="   read as ", indent="     "))
        out += [_wrap(f"{note}.", first="   note: ", indent="     ") for note in m.notes]
        out += [_wrap(f"{w['title']}. {w['text']}", first="   warning: ", indent="     ") for w in m.file_warnings]
    pos = report["positions"]
    how = (f"every position up to {C.grouped(pos['dense_until'] - 1)}, then evenly spaced ones"
           if pos["sampled"] else "every position")
    out.append(_wrap(f"Positions 0 to {C.grouped(pos['max'])} ({C.grouped(pos['count'])} compared: {how}); "
                     f"tolerance {report['tol']:g} rad.", indent="", first=""))
    out.append("")
    if report["agree"]:
        out.append("They agree: the same settings, and every pair's angle within the tolerance at every position "
                   "compared.")
        return "\n".join(out)
    if report["settings"]:
        out.append(f"Settings that differ ({len(report['settings'])}):")
        out += [_wrap(s, first="  - ", indent="    ") for s in report["settings"]]
    else:
        out.append("The settings agree.")
    pairs = report["pairs"]
    if pairs:
        n = report["pairs_differing"]
        if report["first_position"] is None and not n:
            out.append(f"Angles: all {len(pairs)} pairs compared agree within {report['tol']:g} rad.")
        else:
            firsts = [p for p in pairs if p["first_position"] == report["first_position"]]
            lead = (f"; the first from position {C.grouped(report['first_position'])} (pair {firsts[0]['pair']})"
                    if report["first_position"] is not None else "")
            out.append(_wrap(f"Angles: {n} of {len(pairs)} pairs differ by more than {report['tol']:g} rad{lead}.",
                             indent="", first=""))
            rows = [("pair", "largest difference (rad)", f"first position past {report['tol']:g}")]
            rows += [(str(p["pair"]), C.fmt_g(p["largest"], 3),
                      "–" if p["first_position"] is None else C.grouped(p["first_position"])) for p in pairs]
            widths = [max(len(r[i]) for r in rows) for i in range(3)]
            out += ["  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


# --- the command -----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rope-edu", description="Check what a model's config.json or GGUF file "
                                     "makes its RoPE do, as the rope-edu book's \"Check your model\" page does.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{check,diff}")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
        p.add_argument("--layer", type=int, default=None, help="the layer to read (where layers differ)")
        p.add_argument("--layer-type", default=None, help="the layer type to read (e.g. full_attention)")

    check = sub.add_parser("check", help="what a config.json or GGUF file's RoPE does, with warnings",
                           description="Exit 0: read cleanly; 1: read, with warnings; 2: cannot be read.")
    check.add_argument("path", help="a config.json, a model folder holding one, or a .gguf file")
    common(check)
    diff = sub.add_parser("diff", help="the angles two files give the same positions, and which settings differ",
                          description="Exit 0: they agree; 1: they differ; 2: a file cannot be read.")
    diff.add_argument("a", help="a config.json, a folder holding one, or a .gguf file")
    diff.add_argument("b", help="the other one")
    diff.add_argument("--tol", type=float, default=DEFAULT_TOL, help=f"angles closer than this (rad) agree "
                      f"(default {DEFAULT_TOL:g})")
    diff.add_argument("--max-position", type=int, default=None,
                      help="compare positions below this (default: the larger maximum context)")
    common(diff)
    return parser


def _emit(args: argparse.Namespace, text: str, data: dict) -> None:
    print(json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) if args.json else text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rope-edu`` with ``argv`` (default: the command line); return the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # --help, or a usage error argparse has printed: its code, returned
        return stop.code if isinstance(stop.code, int) else EXIT_UNREADABLE
    select = {"layer": args.layer, "layer_type": args.layer_type}
    try:
        if args.command == "check":
            model = load(args.path, **select)
            report = check_report(model)
            _emit(args, format_check(report), report)
            return EXIT_FLAGGED if report["warnings"] else EXIT_CLEAN
        if not 0 < args.tol < math.pi:
            raise Unreadable(f"--tol must be a number of radians in (0, π), got {args.tol}")
        if args.max_position is not None and args.max_position < 1:
            raise Unreadable(f"--max-position must be a positive integer, got {args.max_position}")
        a, b = load(args.a, **select), load(args.b, **select)
        report = diff_report(a, b, tol=args.tol, max_position=args.max_position)
        _emit(args, format_diff(report, a, b), report)
        return EXIT_CLEAN if report["agree"] else EXIT_FLAGGED
    except BrokenPipeError:  # the reader stopped reading (`rope-edu check x | head`)
        sys.stderr.close()
        return EXIT_CLEAN
    except Unreadable as err:
        message = str(err)
        if args.json:
            print(json.dumps({"error": message, "status": "unreadable"}))
        print(f"rope-edu {args.command}: {message}", file=sys.stderr)
        return EXIT_UNREADABLE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
