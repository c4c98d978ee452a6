"""Chapter 14 ("Turn it on"): its engine rows against the engines' code that runs here.

transformers 5.24 (pinned): the chapter's configurations, in both schemas, give the frequencies and
attention factor that ``rope_edu.rope_spec`` and ``rope_edu.scaling`` give; the two pitfalls the
chapter shows (a missing ``original_max_position_embeddings``, a lost ``rope_theta``) are what
transformers does. gguf (pinned): the metadata keys the chapter names are llama.cpp's key names.
vLLM and SGLang are not installed: their commands are checked by merging the chapter's JSON into a
transformers 5.24 config as both engines do (``config.update``) and by the length rule of the function
the chapter cites (vLLM 0.33.0's ``_get_and_verify_max_len``, SGLang 0.5.23's ``get_context_length``,
read from their wheels).
"""

from __future__ import annotations

import ast
import json
import re
import warnings

import numpy as np
import pytest
from gguf.constants import Keys
pytest.importorskip("transformers")  # make check skips this file where transformers is missing
from transformers import Qwen2Config
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from conftest import ROOT
from rope_edu import rope_spec
from rope_edu import scaling as S

CHAPTER = ROOT / "notebooks" / "14_turn_it_on.ipynb"
QWEN = dict(hidden_size=1024, num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=131072)
YARN = dict(factor=4.0, original_max_position_embeddings=32768)
BASE = 1e6


def _hf(**fields):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = Qwen2Config(**QWEN, **fields)
    rope_type = config.rope_parameters["rope_type"]
    inv_freq, factor = ROPE_INIT_FUNCTIONS[rope_type](config, None)
    return config, inv_freq.double().numpy(), float(factor)


def _ours(**fields):
    spec = rope_spec(dict(QWEN, model_type="qwen2", **fields))
    return spec, spec.inv_freq(), spec.attention_factor


SCHEMAS = {
    "transformers 5": dict(rope_parameters={"rope_type": "yarn", "rope_theta": BASE, **YARN}),
    "transformers 4 (type)": dict(rope_theta=BASE, rope_scaling={"type": "yarn", **YARN}),
    "transformers 4 (rope_type)": dict(rope_theta=BASE, rope_scaling={"rope_type": "yarn", **YARN}),
}


@pytest.mark.parametrize("schema", SCHEMAS)
def test_both_schemas_agree_with_transformers(schema):
    _, inv, factor = _hf(**SCHEMAS[schema])
    _, ours, our_factor = _ours(**SCHEMAS[schema])
    np.testing.assert_allclose(ours, inv, rtol=1e-6)
    assert our_factor == pytest.approx(factor, rel=1e-12)
    want, want_factor = S.scaled_frequencies("yarn", 128, BASE, **YARN)
    np.testing.assert_allclose(ours, want, rtol=1e-12)
    assert want_factor == pytest.approx(0.1 * np.log(4.0) + 1, rel=1e-12)


def test_missing_original_length_is_max_position_embeddings_in_transformers():
    fields = dict(rope_parameters={"rope_type": "yarn", "rope_theta": BASE, "factor": 4.0})
    config, inv, _ = _hf(**fields)
    spec, ours, _ = _ours(**fields)
    assert config.rope_parameters["original_max_position_embeddings"] == 131072
    assert spec.scaling_params["original_max_position_embeddings"] == 131072
    np.testing.assert_allclose(ours, inv, rtol=1e-6)


def test_lost_rope_theta_is_10000_in_transformers():
    fields = dict(rope_scaling={"type": "yarn", **YARN})
    config, _, _ = _hf(**fields)
    spec, _, _ = _ours(**fields)
    assert config.rope_parameters["rope_theta"] == 10000.0 == spec.base


def test_linear_rope_scale_is_transformers_linear():
    # llama.cpp's --rope-scale 4 alone: freq_scale 1/4 on every pair, as transformers' "linear".
    _, inv, factor = _hf(rope_parameters={"rope_type": "linear", "rope_theta": BASE, "factor": 4.0})
    ours, our_factor = S.scaled_frequencies("linear", 128, BASE, factor=4.0)
    np.testing.assert_allclose(ours, inv, rtol=1e-6)
    assert our_factor == factor == 1.0


def _gguf_keys() -> dict[str, str]:
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith("GGUF_KEYS = {"):
            return ast.literal_eval(source.split("=", 1)[1].split("}\n", 1)[0] + "}")
    raise AssertionError("chapter 14 has no GGUF_KEYS cell")


def test_gguf_keys_are_llama_cpp_key_names():
    rope = Keys.Rope
    want = {
        "--rope-freq-base N": rope.FREQ_BASE,
        "--rope-scaling yarn": rope.SCALING_TYPE,
        "--rope-scale N": rope.SCALING_FACTOR,
        "--yarn-orig-ctx N": rope.SCALING_ORIG_CTX_LEN,
    }
    assert _gguf_keys() == want


# --- the engines' command lines (vLLM 0.33.0, SGLang 0.5.23; their JSON is merged with config.update) ---


def _bash_blocks() -> list[str]:
    blocks = []
    for cell in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            blocks += re.findall(r"```bash\n(.*?)```", "".join(cell["source"]), flags=re.S)
    return blocks


def _command(engine: str) -> tuple[dict, int]:
    """The JSON override and the requested length of the chapter's command for ``engine``."""
    flag, length = {"vllm": ("--hf-overrides", "--max-model-len"),
                    "sglang": ("--json-model-override-args", "--context-length")}[engine]
    (block,) = [b for b in _bash_blocks() if flag in b]
    text = block.replace("\\\n", " ")
    overrides = json.loads(re.search(r"'(\{.*\})'", text, flags=re.S).group(1))
    return overrides, int(re.search(rf"{length} (\d+)", text).group(1))


def _qwen25_7b() -> Qwen2Config:
    # the fields of Qwen/Qwen2.5-7B-Instruct's config.json that matter here (a transformers 4 checkpoint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Qwen2Config(**dict(QWEN, max_position_embeddings=32768), rope_theta=BASE)


def _merged(overrides: dict) -> Qwen2Config:
    config = _qwen25_7b()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config.update(overrides)  # what both engines do with the JSON
        config.standardize_rope_params()
    return config


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_engine_overrides_give_yarn_with_the_models_base(engine):
    overrides, _ = _command(engine)
    config = _merged(overrides)
    assert config.rope_parameters["rope_theta"] == BASE
    inv, factor = ROPE_INIT_FUNCTIONS["yarn"](config, None)
    want, want_factor = S.scaled_frequencies("yarn", 128, BASE, **YARN)
    np.testing.assert_allclose(inv.double().numpy(), want, rtol=1e-6)
    assert factor == pytest.approx(want_factor, rel=1e-12)
    # The failure the chapter warns of: the same block without rope_theta loses the base.
    lost = dict(overrides, rope_scaling={k: v for k, v in overrides["rope_scaling"].items() if k != "rope_theta"})
    assert _merged(lost).rope_parameters["rope_theta"] is None


def _derived_length(engine: str, config: Qwen2Config) -> float:
    """The length each engine derives from a config, as the functions the chapter cites compute it."""
    rope = config.rope_parameters
    if engine == "vllm":  # _get_and_verify_max_len, vllm/config/model.py
        already_extended = rope["rope_type"] in ("su", "longrope", "llama3", "yarn", "deepseek_yarn")
        return config.max_position_embeddings * (1.0 if already_extended else rope.get("factor", 1.0))
    # get_context_length, sglang/srt/utils/hf_transformers/common.py
    factor = 1 if "original_max_position_embeddings" in rope or rope["rope_type"] == "llama3" else rope["factor"]
    return factor * config.max_position_embeddings


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_engine_commands_pass_the_length_check(engine):
    overrides, length = _command(engine)
    assert _derived_length(engine, _merged(overrides)) >= length
    # Without max_position_embeddings in the JSON, both refuse the length (Qwen2.5 states 32 768).
    bare = {k: v for k, v in overrides.items() if k != "max_position_embeddings"}
    assert _derived_length(engine, _merged(bare)) < length


def test_two_fields_message_is_transformers_4_42():
    # transformers 4.42.4's LlamaConfig._rope_scaling_validation (the last release before 4.43), read
    # from its wheel: the message a Llama 3.1 config meets. Chapter 14 and the atlas quote it.
    message = "`rope_scaling` must be a dictionary with two fields, `type` and `factor`"
    text = " ".join("".join(c["source"]) for c in json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"])
    assert message in " ".join(text.split())
    atlas = " ".join("".join(c["source"]) for c in json.loads(
        (ROOT / "book" / "bug_atlas.ipynb").read_text(encoding="utf-8"))["cells"])
    assert message in " ".join(atlas.split())
