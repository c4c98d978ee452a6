"""The "Check your model" page (book/model_check.md): its rope_spec interpreter against the Python one.

The page reads a config.json in the reader's browser with ``_ext/model_check/rope_spec.js``, an
interpreter of the rules that :mod:`rope_edu.models` holds as data (exported by
:mod:`rope_edu.spec_export`). Here every configuration of the model sweep (a tiny config of each
transformers family, layer by layer, and the same config without its RoPE fields) and every
published model goes through both, in node, and both must give the same spec: the same rotated dims,
layout and per-layer plan; inverse frequencies and attention factors equal to 1e-12 relative; the
same describe() text and defaults (up to how each language writes a float such as 32.0); the same
refusals. The browser tests open the built page and drive it as a reader would.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import ROOT
from rope_edu import models as M
from rope_edu.spec_export import callable_names, registry

NODE_HARNESS = ROOT / "tests" / "model_check_node.mjs"
RTOL = 1e-12
EXACT = ("family", "model_type", "head_dim", "rotary_dim", "rotary_offset", "layout", "output_layout", "scaling",
         "uses_rope", "qk_norm", "layer_type", "layer", "max_positions", "mrope_section", "mrope_assignment",
         "rotating_pairs", "clockwise", "note", "no_rope_reason", "depends_on_length")
CLOSE = ("base", "attention_factor", "softmax_scale_factor", "temperature_tuning", "query_scale", "scaling_params")


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed and CI is set")
        pytest.skip("node is not installed")
    return node


def run_node(configs: list, cases: list[dict]) -> dict:
    """The interpreter's answers: ``cases`` are ``{"config": index, "select": {...}, "seq_len": n}``."""
    payload = {"registry": registry(), "configs": configs, "cases": cases}
    out = subprocess.run([_node(), str(NODE_HARNESS)], input=json.dumps(payload, allow_nan=False), capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def _json(value):
    """What a reader pastes: the config as JSON text, read back (tuples become lists, keys strings; a value
    JSON cannot hold, such as a dtype or an infinite float, becomes its repr)."""
    def plain(v):
        if isinstance(v, float) and not math.isfinite(v):
            return repr(v)
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v if v is None or isinstance(v, (bool, int, float, str)) else repr(v)
    return plain(value)


_FLOAT = re.compile(r"(?<![\w.])(-?\d+)\.0(?![\d])")


def _same_text(a: str, b: str) -> bool:
    """Equal once Python's float repr (32.0, (1, 2)) and JavaScript's (32, [1, 2]) are made alike."""
    def norm(s: str) -> str:
        return _FLOAT.sub(r"\1", s).replace("(", "[").replace(")", "]")
    return norm(a) == norm(b)


def _close(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=RTOL, abs_tol=0.0) or float(a) == float(b)


def python_answer(config: dict, select: dict, seq_len: int | None) -> dict:
    try:
        spec = M.rope_spec(dict(config), **select)
    except (ValueError, TypeError) as exc:
        return {"error": {"kind": type(exc).__name__, "message": str(exc)}}
    out = {k: getattr(spec, k) for k in EXACT + CLOSE}
    out["scaling_params"] = dict(spec.scaling_params)
    out["mrope_section"] = list(spec.mrope_section) if spec.mrope_section else None
    out["inv_freq"] = spec.inv_freq().tolist() if spec.uses_rope else None
    out["inv_freq_long"] = spec.inv_freq(seq_len).tolist() if spec.uses_rope and seq_len else None
    out["defaults"] = list(spec.defaults)
    out["describe"] = spec.describe()
    return {"spec": out}


def differences(py: dict, js: dict) -> list[str]:
    """What differs between the two answers for one case (empty: the same spec, or both refuse)."""
    if "crash" in js:
        return [f"the interpreter crashed: {js['crash'][:400]}"]
    if "error" in py or "error" in js:
        if "error" in py and "error" in js:
            return [] if _same_text(py["error"]["message"], js["error"]["message"]) else [
                f"different refusals: {py['error']['message']!r} / {js['error']['message']!r}"]
        return [f"python: {py.get('error') or 'a spec'}; js: {js.get('error') or 'a spec'}"]
    p, j = py["spec"], js["spec"]
    found = [f"{k}: {p[k]!r} / {j.get(k)!r}" for k in EXACT if p[k] != j.get(k)]
    found += [f"{k}: {p[k]!r} / {j.get(k)!r}" for k in CLOSE + ("inv_freq", "inv_freq_long") if not _close(p[k], j.get(k))]
    if len(p["defaults"]) != len(j["defaults"]) or not all(_same_text(a, b) for a, b in zip(p["defaults"], j["defaults"])):
        found.append(f"defaults: {p['defaults']} / {j['defaults']}")
    if not _same_text(p["describe"], j["describe"]):
        found.append(f"describe:\n{p['describe']}\n---\n{j['describe']}")
    return found


# --- the configurations ---------------------------------------------------------------------------


def _layers(config: dict) -> int | None:
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if isinstance(config.get(key), int):
            return config[key]
    return len(config["layer_types"]) if isinstance(config.get("layer_types"), list) else None


def _cases_of(configs: list, config: dict, name: str, select: dict | None = None) -> list[dict]:
    """The config with no selection, the given one, and every layer (at most 64)."""
    configs.append(_json(config))
    index = len(configs) - 1
    mpe = config.get("max_position_embeddings") or 4096
    seq_len = 8 * mpe if isinstance(mpe, int) else None
    selects = [{}] + ([dict(select)] if select else [])
    n = _layers(config)
    if n:
        selects += [{"layer": i} for i in range(min(n, 64))]
    return [{"config": index, "select": s, "seq_len": seq_len, "name": name} for s in selects]


@lru_cache(maxsize=1)
def sweep_configs() -> tuple[list, list[dict]]:
    """Every tiny config the sweep builds (tests/test_model_sweep.py), as the config class writes it and
    without its RoPE fields, plus the published models."""
    configs: list = []
    cases: list[dict] = []
    for p in M.PUBLISHED.values():
        cases += _cases_of(configs, dict(p.config), f"published {p.name}", dict(p.select))
    try:
        sys.path.insert(0, str(ROOT / "tests"))
        import importlib

        import test_model_sweep as S
    except pytest.skip.Exception:
        return configs, cases
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    for cand in S.CANDIDATES:
        mod = importlib.import_module(f"transformers.models.{cand.name}.modeling_{cand.name}")
        cls = getattr(mod, cand.model_cls).config_class
        try:
            config = S.tiny_config(cls, S.SWEEP_CONFIG.get(cand.name))
        except S.CannotCompare:
            continue
        data = M._as_dict(config)
        cases += _cases_of(configs, data, f"sweep {cand.name}")
        bare = {k: v for k, v in data.items() if k not in S.ROPE_FIELDS}
        cases += _cases_of(configs, bare, f"sweep {cand.name} without RoPE fields")
    return configs, cases


def test_registry_is_json_and_names_only_implemented_callables():
    data = registry()
    assert json.loads(json.dumps(data)) == data
    answer = run_node([], [])
    missing = sorted(set(callable_names(data)) - set(answer["callables"]))
    assert not missing, f"the registry names callables the JavaScript interpreter lacks: {missing}"
    assert set(data["families"]) == set(M.FAMILIES)


def test_interpreter_matches_rope_spec_on_every_swept_and_published_config():
    """Same spec (or the same refusal) from Python and JavaScript for every case."""
    configs, cases = sweep_configs()
    assert len(cases) > 500
    answers = run_node(configs, [{k: c[k] for k in ("config", "select", "seq_len")} for c in cases])["results"]
    problems = []
    accepted = 0
    for case, js in zip(cases, answers):
        py = python_answer(configs[case["config"]], case["select"], case["seq_len"])
        accepted += "spec" in py
        for d in differences(py, js):
            problems.append(f"{case['name']} {case['select']}: {d}")
    assert not problems, f"{len(problems)} differences, e.g.:\n" + "\n".join(problems[:12])
    assert accepted > 0.6 * len(cases)
