"""The torch path (rope_edu.torch_rope) against the numpy core, on the CPU and, when present, CUDA."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import rope_edu  # noqa: E402
from rope_edu import torch_rope as tr  # noqa: E402
from rope_edu.torch_rope import rotation as tr_rotation  # noqa: E402

LAYOUTS = list(tr.LAYOUTS)
CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(
    not CUDA,
    reason="no CUDA device: torch.cuda.is_available() is False here (CPU-only torch or no GPU); "
    "these tests run on a machine with an NVIDIA GPU",
)


def reference(x: torch.Tensor, positions, **kwargs) -> np.ndarray:
    """The numpy core on the exact float64 values of ``x`` (bfloat16/float32 upcast exactly)."""
    pos = positions.cpu().numpy() if isinstance(positions, torch.Tensor) else positions
    return rope_edu.apply_rope(x.detach().cpu().double().numpy(), pos, **kwargs)


def random_tensor(shape, dtype=torch.float64, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


# --- import cost --------------------------------------------------------------------------


@pytest.mark.slow
def test_import_rope_edu_does_not_import_torch_and_torch_rope_does_not_compile():
    code = (
        "import sys, rope_edu, rope_edu.widgets\n"
        "print('torch' in sys.modules)\n"
        "from rope_edu import torch_rope\n"
        "print(bool(torch_rope.rotation._COMPILED), 'torch._inductor' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


# --- frequencies and angles ---------------------------------------------------------------


@pytest.mark.parametrize("dim, base", [(2, 10000.0), (8, 10000.0), (128, 500000.0), (64, 2.5)])
def test_frequencies_equal_numpy_core(dim, base):
    f64 = tr.frequencies(dim, base, dtype=torch.float64)
    assert f64.dtype == torch.float64 and f64.shape == (dim // 2,) and f64.device.type == "cpu"
    np.testing.assert_array_equal(f64.numpy(), rope_edu.frequencies(dim, base))
    f32 = tr.frequencies(dim, base)
    assert f32.dtype == torch.float32
    np.testing.assert_array_equal(f32.numpy(), rope_edu.frequencies(dim, base).astype(np.float32))


def test_frequencies_in_bfloat16_are_rounded_to_8_significant_bits():
    f = tr.frequencies(128, dtype=torch.bfloat16).double().numpy()
    exact = rope_edu.frequencies(128)
    rel = np.abs(f - exact) / exact
    assert 2.0**-12 < rel.max() <= 2.0**-8  # rounded, but within half an ulp (eps/2 = 2**-8)


def test_rope_angles_collapse_positions_in_half_precision():
    one = [1.0]  # theta = 1: the angle is the position itself
    assert tr.rope_angles([256, 257, 258], one, dtype=torch.bfloat16).flatten().tolist() == [256, 256, 258]
    assert tr.rope_angles([2048, 2049, 2050], one, dtype=torch.float16).flatten().tolist() == [2048, 2048, 2050]
    assert tr.rope_angles([100_000], one, dtype=torch.float16).item() == math.inf  # float16 max is 65504
    exact = tr.rope_angles(torch.arange(2**24 - 4, 2**24), one, dtype=torch.float32)
    assert exact.flatten().tolist() == list(range(2**24 - 4, 2**24))


def test_rope_angles_shape_device_and_dtype():
    inv = tr.frequencies(8, dtype=torch.float64)
    ang = tr.rope_angles(torch.arange(6).reshape(2, 3), inv, dtype=torch.float64)
    assert ang.shape == (2, 3, 4) and ang.dtype == torch.float64
    np.testing.assert_array_equal(ang.numpy(), rope_edu.rope_angles(np.arange(6).reshape(2, 3), inv.numpy()))


# --- agreement with the numpy core --------------------------------------------------------

SHAPES_AND_POSITIONS = [
    ((6,), 3),                                   # one token, scalar position
    ((5, 8), np.arange(5)),                      # (seq, dim)
    ((2, 3, 7, 4), np.arange(7) + 11),           # (batch, heads, seq, dim), offset positions
    ((2, 1, 5, 16), np.arange(10).reshape(2, 1, 5)),  # per-batch positions, broadcast over heads
    ((3, 5, 2), np.linspace(0.0, 9.5, 5)),       # real (scaled) positions
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape, positions", SHAPES_AND_POSITIONS)
def test_float64_matches_numpy_core(layout, shape, positions):
    x = random_tensor(shape)
    out = tr.apply_rope(x, positions, layout=layout)
    assert out.dtype == torch.float64 and out.shape == x.shape
    np.testing.assert_allclose(out.numpy(), reference(x, positions, layout=layout), rtol=0, atol=1e-13)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape, positions", SHAPES_AND_POSITIONS)
def test_float32_matches_numpy_core(layout, shape, positions):
    x = random_tensor(shape, torch.float32)
    ref = reference(x, positions, layout=layout)
    out = tr.apply_rope(x, torch.as_tensor(positions), layout=layout)
    assert out.dtype == torch.float32
    # float32 angles: |error| <= a few float32 ulps of the largest angle (about 20 here)
    np.testing.assert_allclose(out.numpy(), ref, rtol=0, atol=2e-5)
    out64 = tr.apply_rope(x, positions, layout=layout, angle_dtype=torch.float64)
    np.testing.assert_allclose(out64.numpy(), ref, rtol=0, atol=2e-6)  # float32 rounding only


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_input_is_rounded_once(layout, dtype):
    x = random_tensor((2, 4, 9, 32), dtype)
    pos = torch.arange(9)
    out = tr.apply_rope(x, pos, layout=layout)
    assert out.dtype == dtype
    ref = torch.from_numpy(reference(x, pos, layout=layout))
    # rotated in float32, rounded once: within half an ulp of the exact result (+ float32 slack)
    eps = torch.finfo(dtype).eps
    np.testing.assert_array_less((out.double() - ref).abs().numpy(), (ref.abs() * eps / 2 + 1e-5).numpy())


@settings(max_examples=30, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    seq=st.integers(1, 6),
    half_dim=st.integers(1, 5),
    broadcast=st.booleans(),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_any_shape_and_positions_match_numpy_core(lead, seq, half_dim, broadcast, layout, seed):
    x = random_tensor((*lead, seq, 2 * half_dim), seed=seed)
    rng = np.random.default_rng(seed)
    pos_shape = (*lead, seq) if broadcast else (seq,)
    positions = rng.integers(0, 1000, size=pos_shape)
    out = tr.apply_rope(x, torch.from_numpy(positions), layout=layout)
    np.testing.assert_allclose(out.numpy(), reference(x, positions, layout=layout), rtol=0, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_strided_views_give_the_same_result(layout):
    # Views that cannot be read as complex numbers in place take the real-arithmetic path.
    base = random_tensor((2, 7, 3, 18), torch.float32)
    views = {
        "odd offset": base[..., 1:17],
        "transposed (batch, seq, heads, dim) -> (batch, heads, seq, dim)": base[..., :16].transpose(1, 2),
        "every other row": base[:, ::2, :, :16],
    }
    for name, view in views.items():
        pos = torch.arange(view.shape[-2])
        out = tr.apply_rope(view, pos, layout=layout)
        expected = tr.apply_rope(view.contiguous(), pos, layout=layout)
        torch.testing.assert_close(out, expected, rtol=0, atol=1e-6, msg=name)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_custom_inv_freq_and_base(layout):
    x = random_tensor((4, 8))
    inv = rope_edu.frequencies(8, 500000.0) / 4.0  # a scaled variant
    for given_inv in (inv, torch.from_numpy(inv), inv.tolist()):
        out = tr.apply_rope(x, np.arange(4), layout=layout, inv_freq=given_inv)
        np.testing.assert_allclose(out.numpy(), reference(x, np.arange(4), layout=layout, inv_freq=inv), atol=1e-13)
    out = tr.apply_rope(x, np.arange(4), layout=layout, base=500000.0)
    np.testing.assert_allclose(out.numpy(), reference(x, np.arange(4), layout=layout, base=500000.0), atol=1e-13)


def test_layout_registry_matches_numpy_core():
    assert list(tr.LAYOUTS) == list(rope_edu.LAYOUTS)
    for name, layout in tr.LAYOUTS.items():
        a, b = layout.pairs(8)
        a_np, b_np = rope_edu.LAYOUTS[name].pairs(8)
        np.testing.assert_array_equal(a, a_np)
        np.testing.assert_array_equal(b, b_np)


def test_angle_dtype_float64_removes_the_float32_angle_error_at_long_positions():
    x = random_tensor((1, 64), torch.float32)
    pos = [100_000]
    ref = reference(x, pos)
    err32 = np.abs(tr.apply_rope(x, pos).numpy() - ref).max()
    err64 = np.abs(tr.apply_rope(x, pos, angle_dtype=torch.float64).numpy() - ref).max()
    assert err32 > 1e-4           # float32 angles near 1e5 are off by up to half an ulp (0.0039)
    assert err64 < 2e-6 < err32   # float64 angles: only the final float32 rounding is left


def test_result_is_new_and_input_untouched():
    x = random_tensor((3, 8), torch.float32)
    before = x.clone()
    out = tr.apply_rope(x, torch.arange(3))
    assert out.data_ptr() != x.data_ptr()
    torch.testing.assert_close(x, before, rtol=0, atol=0)
    assert torch.equal(tr.apply_rope(x, torch.zeros(3)), x)  # position 0 is the identity


def test_integer_input_gives_default_float_dtype():
    x = torch.arange(12).reshape(3, 4)
    out = tr.apply_rope(x, [0, 1, 2])
    assert out.dtype == torch.get_default_dtype()
    np.testing.assert_allclose(out.numpy(), reference(x, [0, 1, 2]), atol=1e-5)


def test_empty_input():
    out = tr.apply_rope(torch.empty(2, 0, 8, dtype=torch.bfloat16), torch.arange(0))
    assert out.shape == (2, 0, 8) and out.dtype == torch.bfloat16


def test_norms_and_relative_positions_are_preserved():
    # Two properties of a rotation, checked on the torch path itself (float64).
    q, k = random_tensor((1, 16), seed=1), random_tensor((1, 16), seed=2)
    for layout in LAYOUTS:
        qm = tr.apply_rope(q, [7], layout=layout)
        torch.testing.assert_close(qm.norm(), q.norm())
        dots = [
            (tr.apply_rope(q, [5 + s], layout=layout) * tr.apply_rope(k, [3 + s], layout=layout)).sum()
            for s in (0, 50, 1000)
        ]
        torch.testing.assert_close(torch.stack(dots), dots[0].expand(3))


# --- gradients ----------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_gradients_flow(layout):
    x = random_tensor((2, 3, 6)).requires_grad_()
    pos = torch.tensor([0, 5, 17])
    assert torch.autograd.gradcheck(lambda t: tr.apply_rope(t, pos, layout=layout), (x,))
    assert torch.autograd.gradgradcheck(lambda t: tr.apply_rope(t, pos, layout=layout), (x,))
    # A rotation is orthogonal: the gradient of <R x, g> with respect to x is R^T g = R_{-m} g.
    g = random_tensor((2, 3, 6), seed=3)
    (tr.apply_rope(x, pos, layout=layout) * g).sum().backward()
    torch.testing.assert_close(x.grad, tr.apply_rope(g, -pos, layout=layout))


# --- cos/sin once per position, and memory traffic ------------------------------------------


def test_cos_sin_tables_are_computed_once_per_position_not_per_head(monkeypatch):
    shapes = []
    original = tr_rotation._cos_sin

    def spy(pos, inv_freq, out_dtype):
        cos, sin = original(pos, inv_freq, out_dtype)
        shapes.append((tuple(cos.shape), tuple(sin.shape)))
        return cos, sin

    monkeypatch.setattr(tr_rotation, "_cos_sin", spy)
    x = random_tensor((2, 8, 5, 16), torch.float32)
    for layout in LAYOUTS:
        tr.apply_rope(x, torch.arange(5), layout=layout)
        tr.apply_rope(x, torch.arange(10).reshape(2, 1, 5), layout=layout)  # per batch, shared by heads
    assert shapes == [((5, 8), (5, 8)), ((2, 1, 5, 8), (2, 1, 5, 8))] * len(LAYOUTS)


def passes(fn, x: torch.Tensor) -> float:
    """Full-size traffic of fn() in units of one copy of x (read x + write x)."""
    log = tr.memory_traffic(fn, min_numel=x.numel() // 2)
    return sum(op.read + op.written for op in log) / (2 * x.numel() * x.element_size())


@pytest.mark.parametrize(
    "dtype, layout, expected",
    [
        (torch.float32, "interleaved", 1.0),   # one complex multiply, in place of the pairs
        (torch.float32, "half", 2.5),          # x * [cos, cos], then two half-size addcmul_
        (torch.bfloat16, "interleaved", 5.0),  # upcast (2+4 bytes), multiply (4+4), round (4+2)
        (torch.bfloat16, "half", 5.5),         # no upcast copy: (2+4) + 2 * (3+2) + (4+2) bytes
    ],
)
def test_eager_memory_traffic_in_copies(dtype, layout, expected):
    x = random_tensor((1, 4, 16, 32), dtype)
    assert passes(x.clone, x) == 1.0
    assert passes(lambda: tr.apply_rope(x, torch.arange(16), layout=layout), x) == expected


def test_memory_traffic_counts_reads_writes_and_skips_views():
    x = torch.ones(4, 8)
    assert tr.memory_traffic(lambda: x.view(8, 4).t()[:3].unsqueeze(0)) == []  # views move nothing
    # flattening a transposed view cannot be a view: it is a copy, read and written in full
    assert tr.memory_traffic(lambda: x.t().flatten()) == [tr.OpTraffic("aten.clone.default", 128, 128)]
    y = torch.ones(4, 8)
    (op,) = tr.memory_traffic(lambda: y.add_(x))
    assert op.op == "aten.add_.Tensor" and op.read == 2 * 128 and op.written == 128
    assert tr.memory_traffic(lambda: x + 1, min_numel=33) == []  # below the size threshold
    with pytest.raises(TypeError, match="fn must be a callable"):
        tr.memory_traffic(x)
    with pytest.raises(ValueError, match="min_numel"):
        tr.memory_traffic(x.clone, min_numel=0)
    with pytest.raises(TypeError, match="min_numel"):
        tr.memory_traffic(x.clone, min_numel=1.5)


# --- torch.compile ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")  # torch's own import
def test_compiled_equals_eager(monkeypatch):
    # One small compile per layout (about 20-30 s the first time on a 2-core CPU with an empty
    # TorchInductor cache, a few seconds once the cache in /tmp is warm).
    x = random_tensor((1, 2, 5, 8), torch.float32)
    pos = torch.arange(5)
    for layout in LAYOUTS:
        compiled = tr.apply_rope_compiled(x, pos, layout=layout)
        assert compiled.dtype == x.dtype and compiled.shape == x.shape
        torch.testing.assert_close(compiled, tr.apply_rope(x, pos, layout=layout), rtol=0, atol=1e-6)
    assert set(tr_rotation._COMPILED) == set(LAYOUTS)
    # the compiled kernel is handed the (seq, dim // 2) tables, computed once outside it, so
    # it rotates with exactly the eager path's cos/sin (no trig of its own, none per head)
    tables = []
    original = tr_rotation._cos_sin
    monkeypatch.setattr(tr_rotation, "_cos_sin", lambda *args: tables.append(original(*args)) or tables[-1])
    x_bf16 = random_tensor((1, 2, 5, 8), torch.bfloat16)
    compiled = tr.apply_rope_compiled(x_bf16, pos, layout="half")
    assert [tuple(t.shape) for pair in tables for t in pair] == [(5, 4), (5, 4)]
    torch.testing.assert_close(compiled, tr.apply_rope(x_bf16, pos, layout="half"), rtol=0, atol=0)


def test_compiled_checks_its_arguments_before_compiling():
    with pytest.raises(ValueError, match="layout"):
        tr.apply_rope_compiled(torch.ones(2, 4), [0, 1], layout="rotate_half")
    with pytest.raises(ValueError, match="positions"):
        tr.apply_rope_compiled(torch.ones(2, 4), [0, 1, 2])


# --- bad inputs ---------------------------------------------------------------------------

GOOD_X = torch.ones(3, 4)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"x": np.ones((3, 4))}, TypeError, "x must be a torch.Tensor"),
        ({"x": [[1.0, 0.0]]}, TypeError, "x must be a torch.Tensor"),
        ({"x": torch.ones(3, 4, dtype=torch.complex64)}, TypeError, "x must be a real-valued"),
        ({"x": torch.ones(3, 4, dtype=torch.bool)}, TypeError, "x must be a real-valued"),
        ({"x": torch.tensor(1.0), "positions": 0}, ValueError, "x must have at least 1 axis"),
        ({"x": torch.ones(3, 5)}, ValueError, r"x.shape\[-1\] \(dim\)"),
        ({"layout": "rotate_half"}, ValueError, "layout"),
        ({"base": 1.0}, ValueError, "base"),
        ({"base": "10000"}, TypeError, "base"),
        ({"positions": [0, 1]}, ValueError, "positions"),
        ({"positions": torch.arange(6).reshape(2, 3)}, ValueError, "positions"),
        ({"positions": torch.tensor([True, False, True])}, TypeError, "positions"),
        ({"positions": torch.ones(3, dtype=torch.complex64)}, TypeError, "positions"),
        ({"positions": torch.tensor([0.0, math.nan, 1.0])}, ValueError, "positions must be finite"),
        ({"positions": [0.0, math.inf, 1.0]}, ValueError, "positions must be finite"),
        ({"positions": ["a", "b", "c"]}, TypeError, "positions"),
        ({"inv_freq": [1.0, 0.1, 0.01]}, ValueError, "inv_freq"),
        ({"inv_freq": torch.ones(3)}, ValueError, "inv_freq"),
        ({"inv_freq": torch.tensor([1.0, math.nan])}, ValueError, "inv_freq must be finite"),
        ({"inv_freq": torch.ones(2, dtype=torch.complex64)}, TypeError, "inv_freq"),
        ({"angle_dtype": torch.bfloat16}, ValueError, "angle_dtype must be torch.float32 or torch.float64"),
        ({"angle_dtype": torch.float16}, ValueError, "angle_dtype"),
        ({"angle_dtype": torch.int32}, ValueError, "angle_dtype must be a floating dtype"),
        ({"angle_dtype": "float32"}, TypeError, "angle_dtype must be a torch.dtype"),
    ],
)
def test_bad_inputs(kwargs, error, match):
    args = {"x": GOOD_X, "positions": torch.arange(3), **kwargs}
    x, positions = args.pop("x"), args.pop("positions")
    with pytest.raises(error, match=match):
        tr.apply_rope(x, positions, **args)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: tr.frequencies(7), ValueError, "dim"),
        (lambda: tr.frequencies(8.0), TypeError, "dim"),
        (lambda: tr.frequencies(8, 0.5), ValueError, "base"),
        (lambda: tr.frequencies(8, dtype=torch.int64), ValueError, "dtype must be a floating dtype"),
        (lambda: tr.frequencies(8, dtype=np.float32), TypeError, "dtype must be a torch.dtype"),
        (lambda: tr.rope_angles([1, 2], [1.0], dtype=torch.int32), ValueError, "dtype"),
        (lambda: tr.rope_angles([1, 2], [[1.0]]), ValueError, "inv_freq"),
        (lambda: tr.rope_angles([1, 2], torch.ones(1, 1)), ValueError, "inv_freq"),
        (lambda: tr.rope_angles([1, math.nan], [1.0]), ValueError, "positions"),
        (lambda: tr.rope_angles(torch.tensor([True]), [1.0]), TypeError, "positions"),
    ],
)
def test_bad_inputs_of_frequencies_and_angles(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- CUDA (skipped with a reason when there is no GPU) ------------------------------------


@needs_cuda
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_cuda_matches_cpu(layout, dtype):
    x = random_tensor((2, 4, 33, 64), dtype)
    pos = torch.arange(33) + 1000
    out = tr.apply_rope(x.cuda(), pos, layout=layout)  # CPU positions are moved to x's device
    assert out.device.type == "cuda" and out.dtype == dtype
    cpu = tr.apply_rope(x, pos, layout=layout)
    # Both devices rotate in float32 (float64) and round once: at most one ulp apart.
    rtol = {torch.float64: 1e-12, torch.float32: 1e-5}.get(dtype, torch.finfo(dtype).eps)
    torch.testing.assert_close(out.cpu(), cpu, rtol=rtol, atol=1e-5)


@needs_cuda
def test_cuda_gradients_and_angle_dtype():
    x = random_tensor((2, 8), torch.float64).cuda().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: tr.apply_rope(t, [3, 90000]), (x,))
    x32 = random_tensor((1, 64), torch.float32).cuda()
    ref = reference(x32, [100_000])
    out = tr.apply_rope(x32, [100_000], angle_dtype=torch.float64)
    np.testing.assert_allclose(out.cpu().numpy(), ref, atol=2e-6)


@needs_cuda
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_cuda_compiled_equals_eager():
    x = random_tensor((1, 4, 64, 128), torch.bfloat16).cuda()
    pos = torch.arange(64, device="cuda")
    for layout in LAYOUTS:
        torch.testing.assert_close(
            tr.apply_rope_compiled(x, pos, layout=layout), tr.apply_rope(x, pos, layout=layout), rtol=1e-2, atol=1e-2
        )
