"""scripts/run_record.py: the fields every experiment script records beside its numbers."""

from __future__ import annotations

import json
import platform
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import run_record  # scripts/run_record.py


def test_record_and_write(tmp_path):
    clock = run_record.Clock()
    sum(range(10_000))
    head = run_record.record("trained_x.py", ["--tokens", "64", "--out", "a b.json"], clock, "numpy", threads=2)
    assert head["command"] == "python scripts/trained_x.py --tokens 64 --out 'a b.json'"
    assert head["seconds_total"] >= 0 and head["cpu_seconds_total"] >= 0
    import numpy as np

    assert head["environment"] == {"numpy": np.__version__, "python": platform.python_version(),
                                   "cpus": head["environment"]["cpus"], "threads": 2}
    pooled = run_record.record("p.py", [], clock, cpu=False, workers=4)
    assert "cpu_seconds_total" not in pooled and pooled["environment"]["workers"] == 4
    assert run_record.version("no-such-distribution-here") is None
    out = tmp_path / "deep" / "r.json"
    run_record.write_json(out, {**head, "runs": {}})
    assert json.loads(out.read_text(encoding="utf-8"))["command"] == head["command"]
    run_record.write_json(out, {"a": [1, 2]}, compact=True)
    assert out.read_text(encoding="utf-8") == '{"a":[1,2]}\n'
