"""scripts/uv_options.py: pip's configured package sources, as uv's options (.ci/run)."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import uv_options


def test_each_source_pip_would_use_becomes_one_uv_option():
    config = "\n".join([
        ":env:.default-timeout='180'",
        ":env:.find-links='/opt/wheels'",
        "global.constraint='/etc/xdg/pip/constraints.txt'",
        "global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'",
        "global.find-links='/opt/wheels'",
        "global.cert='/etc/ssl/certs/ca-certificates.crt'",
    ])
    assert uv_options.uv_options(config) == [
        "--index-strategy", "unsafe-best-match", "--compile-bytecode",
        "--find-links", "/opt/wheels",  # once, though pip has it from the environment and its file
        "--constraint", "/etc/xdg/pip/constraints.txt",
        "--extra-index-url", "file:///opt/pypi/simple",
        "--extra-index-url", "file:///opt/pypi-more/simple",
    ]


def test_no_configuration_leaves_uv_on_pips_defaults():
    assert uv_options.uv_options("") == ["--index-strategy", "unsafe-best-match", "--compile-bytecode"]
