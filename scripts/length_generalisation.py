"""Chapter 13's measured experiment: length generalisation of five position schemes on toy tasks.

Trains the tiny causal transformer of :mod:`rope_edu.toy_lm` with NoPE, sinusoidal, learned
absolute, ALiBi and RoPE positions on synthetic tasks at one sequence length, for several seeds,
and measures next-token accuracy at that length and at twice it. Writes the raw runs, a summary
(mean, standard deviation, min, max over seeds) and the command that made them to a JSON file,
``rope_edu/data/length_generalisation.json`` (package data, so a notebook on Colab finds it too),
which the chapter reads with :func:`rope_edu.toy_lm.load_results`.

    .venv/bin/python scripts/length_generalisation.py                  # the cached experiment
    .venv/bin/python scripts/length_generalisation.py --quick --out /tmp/lg.json   # seconds

CPU only, one torch thread per worker (``--workers`` processes in parallel); the whole default run
takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
from pathlib import Path

from run_record import Clock, record, write_json  # scripts/run_record.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The experiment's settings per task (everything else is ToyConfig's default).
TASK_SETTINGS = {
    "shift": dict(task="shift", vocab=16, k=3, train_len=32, eval_lens=(32, 64)),
    "copy": dict(task="copy", vocab=64, train_len=32, eval_lens=(32, 64)),
    "first": dict(task="first", vocab=16, train_len=32, eval_lens=(32, 64)),
}


def _job(args: tuple) -> dict:
    import torch

    from rope_edu.toy_lm import ToyConfig, train_and_evaluate

    torch.set_num_threads(1)
    task, scheme, seed, overrides = args
    cfg = ToyConfig(**{**TASK_SETTINGS[task], **overrides})
    run = train_and_evaluate(cfg, scheme, seed)
    run["task"] = task
    print(f"{task:7s} {scheme:11s} seed {seed}: " + ", ".join(f"{n}: {a:.3f}" for n, a in run["accuracy"].items())
          + f"  ({run['seconds']:.1f} s)", flush=True)
    return run


def main(argv: list[str] | None = None) -> dict:
    from rope_edu.toy_lm import POSITION_SCHEMES, ToyConfig, config_dict, summarise

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=["shift", "first"], choices=list(TASK_SETTINGS))
    parser.add_argument("--schemes", nargs="+", default=list(POSITION_SCHEMES), choices=list(POSITION_SCHEMES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: ToyConfig's)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a tiny run (few steps, small model) to check the code")
    parser.add_argument("--out", type=Path, default=ROOT / "rope_edu" / "data" / "length_generalisation.json")
    args = parser.parse_args(argv)

    overrides: dict = {}
    if args.quick:
        overrides = dict(steps=30, d_model=32, batch=16, eval_batches=2)
    if args.steps is not None:
        overrides["steps"] = args.steps
    jobs = [(t, s, seed, overrides) for t in args.tasks for s in args.schemes for seed in args.seeds]
    clock = Clock()
    if args.workers > 1:
        with mp.get_context("spawn").Pool(args.workers) as pool:
            runs = pool.map(_job, jobs, chunksize=1)
    else:
        runs = [_job(j) for j in jobs]

    result = {
        **record("length_generalisation.py", argv, clock, "torch", cpu=False, workers=args.workers, threads_per_worker=1),
        "config": {t: config_dict(ToyConfig(**{**TASK_SETTINGS[t], **overrides})) for t in args.tasks},
        "runs": runs,
        "summary": {t: summarise([r for r in runs if r["task"] == t]) for t in args.tasks},
        "summary_new_positions": {t: summarise([r for r in runs if r["task"] == t], "accuracy_new_positions")
                                  for t in args.tasks},
    }
    write_json(args.out, result)
    print(f"wrote {args.out} ({result['seconds_total']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
