"""Chapter 5's measured experiment: RoPE against p-RoPE (Barbero et al. 2024) on the toy tasks.

Trains the tiny causal transformer of :mod:`rope_edu.toy_lm` with RoPE and with p-RoPE, where only
the fastest fraction ``p`` of each head's frequency pairs rotate (``p`` = 1: RoPE; ``p`` = 0: no
pair rotates, NoPE through the same code), on the length tasks of chapter 13's experiment with the
same settings (``scripts/length_generalisation.py``'s ``TASK_SETTINGS``), for several seeds. It
measures next-token accuracy at the trained length and at twice it; for the RoPE models it also
evaluates each trained model with some pairs stopped (frequency 0) at evaluation time, a probe of
what the model uses the fast and the slow pairs for. Writes the raw runs, a summary per ``p`` and
the command to ``rope_edu/data/p_rope.json`` (package data), which chapter 5 reads with
:func:`rope_edu.toy_lm.load_results`.

    .venv/bin/python scripts/p_rope_experiment.py                          # the cached experiment
    .venv/bin/python scripts/p_rope_experiment.py --quick --out /tmp/p.json  # seconds

CPU only, one torch thread per worker; the default run takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
from pathlib import Path

from run_record import Clock, record, write_json  # scripts/run_record.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

#: The fractions p of rotating pairs compared (1: RoPE, 0: no pair rotates).
FRACTIONS = (1.0, 0.75, 0.5, 0.25, 0.0)
#: Pairs stopped at evaluation in the RoPE models (the toy's heads have 16 coordinates, 8 pairs).
PROBES = {"slowest half stopped": (4, 5, 6, 7), "fastest two stopped": (0, 1)}


def _job(args: tuple) -> dict:
    import torch

    from length_generalisation import TASK_SETTINGS
    from rope_edu.toy_lm import ToyConfig, train_and_evaluate

    torch.set_num_threads(1)
    task, p, seed, overrides = args
    cfg = ToyConfig(**{**TASK_SETTINGS[task], **overrides})
    probes = PROBES if p == 1.0 else None
    run = train_and_evaluate(cfg, "rope", seed, rope_fraction=p, freeze_at_eval=probes)
    run["task"], run["rope_fraction"] = task, p
    print(f"{task:6s} p = {p:4.2f} seed {seed}: " + ", ".join(f"{n}: {a:.3f}" for n, a in run["accuracy"].items())
          + f"  ({run['seconds']:.1f} s)", flush=True)
    return run


def summarise_fractions(runs: list[dict], key: str = "accuracy") -> dict:
    """:func:`rope_edu.toy_lm.summarise` per fraction ``p`` (keys ``str(p)``)."""
    from rope_edu.toy_lm import summarise

    return {str(p): summarise([r for r in runs if r["rope_fraction"] == p], key)["rope"]
            for p in dict.fromkeys(r["rope_fraction"] for r in runs)}


def summarise_probes(runs: list[dict]) -> dict:
    """Per probe, :func:`rope_edu.toy_lm.summarise` of the RoPE runs' accuracy with those pairs stopped."""
    from rope_edu.toy_lm import summarise

    probed = [r for r in runs if "accuracy_frozen" in r]
    names = dict.fromkeys(name for r in probed for name in r["accuracy_frozen"])
    return {name: summarise([{"scheme": "rope", "acc": r["accuracy_frozen"][name]} for r in probed], "acc")["rope"]
            for name in names}


def main(argv: list[str] | None = None) -> dict:
    from length_generalisation import TASK_SETTINGS
    from rope_edu.toy_lm import ToyConfig, config_dict

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=["shift", "first"], choices=list(TASK_SETTINGS))
    parser.add_argument("--fractions", nargs="+", type=float, default=list(FRACTIONS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a tiny run (few steps, small model) to check the code")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "p_rope.json")
    args = parser.parse_args(argv)

    overrides: dict = {}
    if args.quick:
        overrides = dict(steps=30, batch=16, eval_batches=2)
    jobs = [(t, p, seed, overrides) for t in args.tasks for p in args.fractions for seed in args.seeds]
    clock = Clock()
    if args.workers > 1:
        with mp.get_context("spawn").Pool(args.workers) as pool:
            runs = pool.map(_job, jobs, chunksize=1)
    else:
        runs = [_job(j) for j in jobs]

    result = {
        **record("p_rope_experiment.py", argv, clock, "torch", cpu=False, workers=args.workers, threads_per_worker=1),
        "config": {t: config_dict(ToyConfig(**{**TASK_SETTINGS[t], **overrides})) for t in args.tasks},
        "probes": {name: list(pairs) for name, pairs in PROBES.items()},
        "runs": runs,
        "summary": {t: summarise_fractions([r for r in runs if r["task"] == t]) for t in args.tasks},
        "summary_new_positions": {t: summarise_fractions([r for r in runs if r["task"] == t],
                                                         "accuracy_new_positions") for t in args.tasks},
        "summary_probes": {t: summarise_probes([r for r in runs if r["task"] == t]) for t in args.tasks},
    }
    write_json(args.out, result)
    print(f"wrote {args.out} ({result['seconds_total']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
