"""The tuned kernels (rope_edu/kernels.py) compute what the reference in rope.py computes.

Each backend's kernel of each layout against ``rope._rotate_pairs`` (the pair equation): bit for
bit, except numpy's interleaved complex multiply, which may fuse a multiply and an add and so
differ by one rounding. Shapes cover one table for all rows, per-batch and per-row positions, one
position per row, short sequences, a single vector; inputs strided and transposed; float32 and
float64. The numba backend runs where numba is installed (``rope_edu[fast]``).
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

import rope_edu
from rope_edu import apply_rope, frequencies, kernels
from rope_edu.rope import _rotate_pairs

LAYOUT_NAMES = sorted(rope_edu.LAYOUTS)
HAS_NUMBA = importlib.util.find_spec("numba") is not None
BACKENDS = [
    pytest.param(name, marks=pytest.mark.skipif(name == "numba" and not HAS_NUMBA, reason="numba not installed"))
    for name in kernels.BACKENDS
]

SHAPES = [
    ((3, 700, 64), (700,)),  # positions shared by all heads (one table), several blocks
    ((2, 3, 37, 16), (2, 1, 37)),  # per-batch positions, broadcast over heads
    ((2, 3, 37, 16), (2, 3, 37)),  # a table per row
    ((2, 3, 37, 16), (2, 3, 1)),  # one position per row
    ((4, 5, 3, 8), (5, 1)),  # short sequences: several rows per block
    ((9, 16), ()),  # one position for everything
    ((16,), ()),  # a single vector
]


@pytest.fixture
def backend(request):
    previous = kernels.use(request.param)
    yield request.param
    kernels.use(previous)


def tables(pos: np.ndarray, dim: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    angles = np.asarray(pos, dtype=np.float64)[..., None] * frequencies(dim)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def assert_agree(got: np.ndarray, ref: np.ndarray, xw: np.ndarray, backend: str, layout: str) -> None:
    """``got`` (in the output dtype) is ``ref`` (the reference in the working dtype of ``xw``) rounded
    to the output dtype: bit for bit, or within one rounding for numpy's complex multiply."""
    expected = ref.astype(got.dtype)
    assert got.shape == expected.shape
    if not (backend == "numpy" and layout == "interleaved" and xw.dtype in kernels.DTYPES):
        np.testing.assert_array_equal(got, expected)
        return
    # one rounding of a product at most: |error| <= eps * (|x_a| + |x_b|) for the pair (|cos|, |sin| <= 1),
    # and one more rounding where the result is cast to a narrower output dtype
    a, b = rope_edu.LAYOUTS[layout].pairs(xw.shape[-1])
    bound = np.finfo(xw.dtype).eps * np.repeat(np.abs(xw[..., a]) + np.abs(xw[..., b]), 2, axis=-1).astype(np.float64)
    if got.dtype != ref.dtype:
        bound = bound + np.spacing(np.maximum(np.abs(got), np.abs(expected))).astype(np.float64)
    assert np.all(np.abs(got.astype(np.float64) - expected) <= bound)


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, pos_shape", SHAPES)
def test_kernel_equals_the_reference(backend, layout, dtype, shape, pos_shape):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    cos, sin = tables(rng.integers(0, 70_000, pos_shape), shape[-1], dtype)
    ref = _rotate_pairs(x, cos, sin, layout)
    assert_agree(kernels.rotate(x, cos, sin, layout), ref, x, backend, layout)


@pytest.mark.parametrize("block_bytes", [64, 4096])
@pytest.mark.parametrize("shape, pos_shape", SHAPES)
def test_numpy_half_blocks_equal_the_reference(monkeypatch, block_bytes, shape, pos_shape):
    """Blocks (tiny, one row, several rows) and shared tables change the order of work, not one bit
    of the result (the default block size is covered above)."""
    monkeypatch.setattr(kernels, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    cos, sin = tables(rng.integers(0, 5000, pos_shape), shape[-1], np.float32)
    np.testing.assert_array_equal(kernels.BACKENDS["numpy"]["half"](x, cos, sin), _rotate_pairs(x, cos, sin, "half"))


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_kernel_strided_inputs_and_tables(backend, layout):
    """Non-contiguous x (a strided last axis, transposed leading axes) and broadcast or strided tables."""
    rng = np.random.default_rng(8)
    xs = {
        "strided dim": rng.standard_normal((4, 5, 64)).astype(np.float32)[:, :, ::2],
        "transposed": rng.standard_normal((5, 4, 6, 32)).astype(np.float32).swapaxes(0, 1),
        "reversed positions": rng.standard_normal((3, 9, 32)).astype(np.float32)[:, ::-1],
    }
    for name, x in xs.items():
        seq, dim = x.shape[-2:]
        pos_options = {
            "shared": np.arange(seq),
            "strided": np.arange(2 * seq)[::2],
            "broadcast view": np.broadcast_to(np.arange(seq), x.shape[:-1]),
        }
        for pname, pos in pos_options.items():
            cos, sin = tables(pos, dim, np.float32)
            cos_view, sin_view = cos[..., ::1], sin[..., ::1]
            if cos.ndim >= 2:  # a table that is itself a strided view of a larger one
                cos_big, sin_big = tables(np.repeat(pos, 2, axis=-1), dim, np.float32)
                cos_view, sin_view = cos_big[..., ::2, :], sin_big[..., ::2, :]
            for c, s in ((cos, sin), (cos_view, sin_view)):
                ref = _rotate_pairs(x, c, s, layout)
                try:
                    assert_agree(kernels.rotate(x, c, s, layout), ref, x, backend, layout)
                except AssertionError as err:
                    raise AssertionError(f"x {name}, positions {pname}") from err


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble, np.int64])
def test_apply_rope_on_each_backend_equals_the_reference(backend, layout, dtype):
    """apply_rope's dtype policy holds on every backend: float64 angles and cos/sin, rounded once
    to the working dtype (float32 for float16, float64 for integers), the result in x's float dtype
    (a dtype the kernels are not written for, like longdouble, is rotated by the reference)."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((2, 3, 41, 32)) * 5).astype(dtype)
    pos = rng.integers(0, 9000, (2, 1, 41))
    out_dtype = np.float64 if dtype == np.int64 else dtype
    work = np.result_type(out_dtype, np.float32)
    cos, sin = tables(pos, 32, work)
    ref = _rotate_pairs(x.astype(work), cos, sin, layout)
    got = apply_rope(x, pos, layout=layout)
    assert got.dtype == out_dtype
    assert_agree(got, ref, x.astype(work), backend, layout)


def test_backends_agree_with_each_other_on_half_bit_for_bit():
    if not HAS_NUMBA:
        pytest.skip("numba not installed")
    x = np.random.default_rng(10).standard_normal((2, 4, 300, 64)).astype(np.float32)
    pos = np.arange(300)
    on_numpy = apply_rope(x, pos, layout="half")
    previous = kernels.use("numba")
    try:
        np.testing.assert_array_equal(apply_rope(x, pos, layout="half"), on_numpy)
    finally:
        kernels.use(previous)


def test_use_and_backend():
    assert kernels.backend() == "numpy"  # the default, what the book runs
    assert kernels.use("numpy") == "numpy"
    with pytest.raises(ValueError, match=r"unknown backend 'torch'; expected one of 'numpy', 'numba'"):
        kernels.use("torch")
    assert kernels.backend() == "numpy"


def test_use_numba_without_numba(monkeypatch):
    monkeypatch.setattr(kernels, "_numba_available", lambda: False)
    with pytest.raises(ImportError, match=r"rope_edu\[fast\]"):
        kernels.use("numba")
    assert kernels.backend() == "numpy"


# --- the table cache --------------------------------------------------------------------------


def test_tables_are_kept_and_results_do_not_change():
    cache = kernels.TABLES
    cache.clear()
    x = np.random.default_rng(11).standard_normal((2, 50, 16)).astype(np.float32)
    pos = np.arange(50)
    first = apply_rope(x, pos, layout="half")
    assert (cache.hits, cache.misses) == (0, 1)
    np.testing.assert_array_equal(apply_rope(x, pos, layout="half"), first)
    np.testing.assert_array_equal(apply_rope(x, pos.tolist(), layout="half"), first)  # equal positions
    assert (cache.hits, cache.misses) == (2, 1)
    cos, sin = cache.get(pos.astype(np.float64), frequencies(16), np.dtype(np.float32), None)
    expected = tables(pos, 16, np.float32)
    np.testing.assert_array_equal(cos, expected[0])  # the kernels did not write into the kept tables
    np.testing.assert_array_equal(sin, expected[1])
    # a different base, dtype or position shape is a different table
    apply_rope(x, pos, layout="half", base=500.0)
    apply_rope(x.astype(np.float64), pos, layout="half")
    apply_rope(x, pos[None], layout="half")
    assert cache.misses == 4
    cache.clear()


def test_table_cache_drops_the_least_recently_used_and_skips_large_tables():
    cache = kernels.TableCache(size=2, max_bytes=1000)
    calls = []

    def compute(pos, freqs, dtype):
        calls.append(pos[0])
        return tables(pos, 2 * freqs.size, dtype)

    freqs, f32 = frequencies(8), np.dtype(np.float32)
    for start in (0, 1, 0, 2, 1):  # 0 is used again before 2 arrives, so 1 is dropped
        cache.get(np.arange(start, start + 10.0), freqs, f32, compute)
    assert calls == [0, 1, 2, 1]
    cache.get(np.arange(100.0), freqs, f32, compute)  # 2 * 100 * 4 * 4 bytes > 1000: not kept
    cache.get(np.arange(100.0), freqs, f32, compute)
    assert calls[-2:] == [0, 0] and len(cache._kept) == 2


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape, pos_shape", SHAPES)
def test_apply_rope_into_out_writes_what_it_returns_otherwise(backend, layout, dtype, shape, pos_shape):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    pos = rng.integers(0, 70_000, pos_shape)
    expected = apply_rope(x, pos, layout=layout)
    out = np.full(shape, np.nan, dtype=dtype)  # written before: every element must be replaced
    assert apply_rope(x, pos, layout=layout, out=out) is out
    np.testing.assert_array_equal(out, expected)
    # an out that is not C-contiguous (every other row of a larger array) is written too
    big = np.full((*shape[:-1], 2 * shape[-1]), np.nan, dtype=dtype)
    strided = big[..., ::2]
    assert apply_rope(x, pos, layout=layout, out=strided) is strided
    np.testing.assert_array_equal(strided, expected)
    assert np.isnan(big[..., 1::2]).all()  # and nothing beside it


@pytest.mark.parametrize(
    "make_out, error, words",
    [
        (lambda x: x.tolist(), TypeError, "out must be a numpy.ndarray"),
        (lambda x: np.empty((2, 8), np.float32), ValueError, "out must have the result's shape (3, 8)"),
        (lambda x: np.empty(x.shape, np.float64), ValueError, "and dtype float32"),
        (lambda x: np.broadcast_to(np.float32(0), x.shape), ValueError, "out must be writeable"),
        (lambda x: x, ValueError, "out must not share memory with x"),
        (lambda x: x[::-1], ValueError, "out must not share memory with x"),
    ],
)
def test_apply_rope_refuses_an_out_it_cannot_write(make_out, error, words):
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    before = x.copy()
    with pytest.raises(error, match=re.escape(words)):
        apply_rope(x, [0, 1, 2], out=make_out(x))
    np.testing.assert_array_equal(x, before)
