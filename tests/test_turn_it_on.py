"""Chapter 14 ("Turn it on"): its engine rows against the engines' code that runs here.

transformers 5.24 (pinned): the chapter's configurations, in both schemas, give the frequencies and
attention factor that ``rope_edu.rope_spec`` and ``rope_edu.scaling`` give; the two pitfalls the
chapter shows (a missing ``original_max_position_embeddings``, a lost ``rope_theta``) are what
transformers does. gguf (pinned): the metadata keys the chapter names are llama.cpp's key names.
vLLM and SGLang are not installed: their commands are checked by merging the chapter's JSON into a
transformers 5.24 config as both engines do (``config.update``) and by the length rules of the
functions the chapter cites (vLLM's ``_get_and_verify_max_len`` before and after vllm-project/vllm#56446,
SGLang 0.5.23's ``get_context_length``). llama.cpp is not installed: its command is checked against the
flag table and the numbers of the chapter.
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
    assert spec.rope_params["original_max_position_embeddings"] == 131072
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
    """The length each engine derives from a config, as the functions the chapter cites compute it
    (for vLLM the smaller of its two rules: before vllm-project/vllm#56446, YaRN's length was
    original_max_position_embeddings x factor; since, max_position_embeddings as it stands)."""
    rope = config.rope_parameters
    if engine == "vllm":  # _get_and_verify_max_len, vllm/config/model.py
        if rope["rope_type"] == "yarn":
            before = rope["original_max_position_embeddings"] * rope["factor"]
            return min(before, config.max_position_embeddings)
        already_extended = rope["rope_type"] in ("su", "longrope", "llama3")
        return config.max_position_embeddings * (1.0 if already_extended else rope.get("factor", 1.0))
    # get_context_length, sglang/srt/utils/hf_transformers/common.py
    factor = 1 if "original_max_position_embeddings" in rope or rope["rope_type"] == "llama3" else rope["factor"]
    return factor * config.max_position_embeddings


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_engine_commands_pass_the_length_check(engine):
    overrides, length = _command(engine)
    assert _derived_length(engine, _merged(overrides)) >= length
    # Without max_position_embeddings in the JSON, both refuse the length (Qwen2.5 states 32 768):
    # SGLang, and vLLM since #56446 (before it, vLLM derived 32 768 x 4 and let it pass).
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


def test_llama_cpp_command_sets_all_three_numbers():
    # The chapter's llama-server command: YaRN's type, factor and trained length, and the context
    # (a flag missing leaves YaRN off or misplaced); each flag is one of the chapter's GGUF_KEYS.
    (block,) = [b for b in _bash_blocks() if "llama-server" in b]
    text = block.replace("\\\n", " ")
    flags = re.findall(r"(--[a-z-]+) ([\w.]+)", text)
    assert {f"{flag} N" if flag != "--rope-scaling" else f"{flag} {value}" for flag, value in flags} <= set(
        _gguf_keys())
    values = dict(flags)
    assert values["--rope-scaling"] == "yarn"
    assert float(values["--rope-scale"]) == YARN["factor"]
    assert int(values["--yarn-orig-ctx"]) == YARN["original_max_position_embeddings"]
    assert int(re.search(r" -c (\d+)", text).group(1)) == YARN["factor"] * YARN["original_max_position_embeddings"]


def test_nested_override_reaches_the_language_model_in_transformers():
    # Chapter 14's nested blocks: on a Qwen3-VL config, a top-level block merged with config.update (as SGLang
    # does; vLLM sets the attribute) never reaches text_config: rope_parameters is stored on the outer config,
    # rope_scaling raises AttributeError; the nested block sets YaRN there, as rope_spec reads it.
    from transformers import Qwen3VLConfig

    text = {"hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8, "head_dim": 128,
            "max_position_embeddings": 262144,
            "rope_parameters": {"rope_type": "default", "rope_theta": 5e6, "mrope_section": [24, 20, 20],
                                "mrope_interleaved": True}}
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 262144}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = Qwen3VLConfig(text_config=dict(text))
        config.update({"rope_parameters": dict(yarn)})
        with pytest.raises(AttributeError, match="max_position_embeddings"):
            Qwen3VLConfig(text_config=dict(text)).update({"rope_scaling": dict(yarn)})
    assert config.text_config.rope_parameters["rope_type"] == "default"
    flat = rope_spec({"model_type": "qwen3_vl", "text_config": dict(text, model_type="qwen3_vl_text"),
                      "rope_parameters": yarn})
    assert flat.rope_type == "default"
    nested_block = {**text["rope_parameters"], **yarn}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nested = Qwen3VLConfig(text_config=dict(text, rope_parameters=nested_block))
    inv, factor = ROPE_INIT_FUNCTIONS["yarn"](nested.text_config, None)
    ours = rope_spec({"model_type": "qwen3_vl",
                      "text_config": dict(text, model_type="qwen3_vl_text", rope_parameters=nested_block)})
    assert ours.rope_type == "yarn"
    np.testing.assert_allclose(ours.inv_freq(), inv.double().numpy(), rtol=1e-6)
    assert ours.attention_factor == pytest.approx(float(factor), rel=1e-12)


def test_kshift_replay_matches_the_measured_norm_growth():
    # Chapter 14's K-shift replay: ggml applies the forward pass's factor at every shift, so a key's norm
    # grows by 1 + 0.1 ln s per shift; the fork's measurement (freq_scale 0.5) was 1.06931, 1.14342, 1.22270.
    a = S.yarn_attention_factor(2.0)
    np.testing.assert_allclose(a ** np.arange(1, 4), [1.06931, 1.14342, 1.22270], atol=5e-5)


def test_nested_json_raises_the_nested_length():
    # Chapter 14's nested blocks: the nested override states the new length inside text_config (without it vLLM since
    # #56446 and SGLang take text_config.max_position_embeddings as already extended and refuse a longer context).
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    blocks = [b for c in cells for b in re.findall(r"```json\n(.*?)```", "".join(c["source"]), flags=re.S)]
    (text,) = [json.loads(b)["text_config"] for b in blocks if "text_config" in b]
    block = text["rope_parameters"]
    assert text["max_position_embeddings"] == block["factor"] * block["original_max_position_embeddings"]
