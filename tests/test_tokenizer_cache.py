"""The folder where rope_edu.trained.load_tokenizer keeps the tokenizers it built: what it removes
(folders, their ages, their names) without building one; tests/test_trained.py keeps and loads real
ones."""

from __future__ import annotations

import os
import time

from rope_edu import trained
from rope_edu.trained.loading import UNUSED_DAYS, _prune_kept

KEY = "0123456789abcdef01234567"  # a kept tokenizer's folder: 24 hex digits of its key


def _folder(cache, name: str, days_unused: float, now: float):
    folder = cache / name
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").write_text("{}")
    os.utime(folder, (now - days_unused * 86400,) * 2)
    return folder


def test_kept_tokenizers_unused_for_long_are_removed_and_nothing_else(tmp_path):
    now = time.time()
    old = _folder(tmp_path, KEY, UNUSED_DAYS + 1, now)
    half_written = _folder(tmp_path, f".{KEY[::-1]}-x1y2", UNUSED_DAYS + 1, now)  # left by a killed process
    recent = _folder(tmp_path, KEY.replace("0", "f"), UNUSED_DAYS - 1, now)
    writing = _folder(tmp_path, f".{KEY}-a8b9", 0, now)  # another process is writing it now
    other = _folder(tmp_path, "notes", UNUSED_DAYS + 100, now)  # not one of load_tokenizer's
    (tmp_path / "ffffffffffffffffffffffff").write_text("a file")
    assert sorted(_prune_kept(tmp_path, now)) == sorted([old, half_written])
    assert sorted(tmp_path.iterdir()) == sorted([recent, writing, other, tmp_path / "ffffffffffffffffffffffff"])


def test_the_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ROPE_EDU_CACHE", str(tmp_path / "a"))
    assert trained.tokenizer_cache() == tmp_path / "a" / "tokenizers"
    monkeypatch.delenv("ROPE_EDU_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert trained.tokenizer_cache() == tmp_path / "xdg" / "rope-edu" / "tokenizers"
