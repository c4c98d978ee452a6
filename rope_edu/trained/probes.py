"""What the scripts measure on the trained model: perplexity, and what its heads do with their
rotation pairs (chapter 16, ``scripts/trained_probe.py``), with the frequencies and scores of the
interventions that switch a cause off (``scripts/trained_interventions.py``)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .._checks import as_real_array, check_choice, check_int
from ..llama import LlamaWeights, llama_forward, token_log_likelihoods
from ..rope import LAYOUTS

__all__ = ["perplexity", "attention_probe", "pair_norms", "head_positional_stats", "attention_by_distance",
           "pair_margins", "stopped_frequencies", "shifted_frequencies", "head_scores", "previous_token_use",
           "uniform_attention", "probe_statistics"]


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
    from ..llama import decoder_layer, llama_attention_weights, rms_norm, split_heads

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
    x = as_real_array(x, "x", min_ndim=2).astype(np.float64, copy=False)
    if x.shape[-1] % 2:
        raise ValueError(f"x's last axis (head_dim) must be even (pairs of coordinates), got {x.shape[-1]}")
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
    a = as_real_array(attention, "attention", min_ndim=2).astype(np.float64, copy=False)
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
    a = as_real_array(attention, "attention", min_ndim=2).astype(np.float64, copy=False)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attention must be square in its last two axes (queries, keys), got shape {a.shape}")
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
    from ..rope import frequencies

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
    from ..rope import frequencies

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
    from .._checks import check_inv_freq
    from ..rope import apply_rope

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
