"""Chapter 11's image-grid figure (rope_edu.widgets.patch_shift): data and readouts against
rope_edu.multidim, and its JavaScript ``compute`` under Node.js (tests/node_figure.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rope_edu.multidim import apply_rope_nd, axial_frequencies, mixed_frequencies
from rope_edu.widgets import JS_DIR, Figure
from rope_edu.widgets import patch_shift as fig
from node_figure import call_js

FAST = settings(max_examples=60, deadline=None)
CONTROLS = {c.name: c for c in fig.CONTROLS}
ints = {name: st.integers(int(c.min), int(c.max)) for name, c in CONTROLS.items() if c.kind == "range"}


def test_data_is_the_package_frequencies():
    d = fig.data()
    np.testing.assert_array_equal(d["freqs"]["axial"], axial_frequencies(fig.DIM, 100.0))
    np.testing.assert_array_equal(d["freqs"]["mixed"], mixed_frequencies(fig.DIM, 0.6, base=100.0))
    q, k = fig.vectors()
    np.testing.assert_array_equal(d["q"], q)
    # the colour scale's bound is the Cauchy-Schwarz limit of any score, pair by pair
    for scheme in fig.SCHEMES:
        assert np.abs(fig.grid_scores((3, 4), scheme)).max() <= d["bound"]


@FAST
@given(**ints, scheme=st.sampled_from(list(fig.SCHEMES)))
def test_shift_keeps_the_score_which_the_offset_gives(qr, qc, kr, kc, sr, sc, scheme):
    r = fig.readouts(qr, qc, kr, kc, sr, sc, scheme)
    assert (r["dr"], r["dc"]) == (kr - qr, kc - qc)
    assert r["score"] == pytest.approx(r["score_unshifted"], abs=1e-12)
    assert r["score"] == pytest.approx(r["score_offset"], abs=1e-12)
    q, k = fig.vectors()
    f = fig.SCHEMES[scheme]
    by_hand = apply_rope_nd(q[None], [[qr + sr, qc + sc]], f) @ apply_rope_nd(k[None], [[kr + sr, kc + sc]], f).T
    assert r["score"] == pytest.approx(float(by_hand[0, 0]), abs=1e-12)


def test_the_grid_travels_with_the_query():
    a, b = fig.grid_scores((1, 1)), fig.grid_scores((3, 2))
    np.testing.assert_allclose(b[2:, 1:], a[:-2, :-1], atol=1e-12)  # shifted by (2, 1)
    assert not np.allclose(a, b)


def test_moving_one_patch_changes_the_score():
    a, b = fig.readouts(1, 1, 3, 2, 0, 0, "axial"), fig.readouts(1, 1, 3, 3, 0, 0, "axial")
    assert abs(a["score"] - b["score"]) > 1e-2


def test_javascript_compute_agrees_with_readouts():
    rng = np.random.default_rng(0)
    names = ["qr", "qc", "kr", "kc", "sr", "sc"]
    states = []
    for _ in range(120):
        st_ = {n: int(rng.integers(CONTROLS[n].min, CONTROLS[n].max + 1)) for n in names}
        st_["scheme"] = str(rng.choice(list(fig.SCHEMES)))
        states.append(st_)
    out = call_js("patch_shift", "compute", [[s] for s in states], extra=[fig.data()])
    for s, got in zip(states, out):
        want = fig.readouts(**s)
        for key in ("dr", "dc", "score", "score_unshifted", "score_offset"):
            assert got[key] == pytest.approx(want[key], abs=1e-9), key
        np.testing.assert_allclose(got["scores"], fig.grid_scores((s["qr"] + s["sr"], s["qc"] + s["sc"]), s["scheme"]),
                                   atol=1e-9)


@pytest.mark.parametrize("call, error, match", [
    (lambda: fig.readouts(1.5, 0, 0, 0, 0, 0, "axial"), TypeError, "qr"),
    (lambda: fig.readouts(1, 0, 0, 0, 0, True, "axial"), TypeError, "sc"),
    (lambda: fig.readouts(1, 0, 0, 0, 0, 0, "polar"), ValueError, "scheme"),
    (lambda: fig.DEMO.state(sr=9), ValueError, "sr"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_figure_wiring_and_live_widget():
    assert isinstance(fig.DEMO, Figure) and fig.DEMO.name == "patch_shift"
    assert (JS_DIR / "patch_shift.js").is_file()
    w = fig.DEMO.widget(sr=2)
    assert (w.qr, w.sr, w.scheme) == (1, 2, "axial")
    assert [c["name"] for c in w._controls] == ["qr", "qc", "kr", "kc", "sr", "sc", "scheme"]
