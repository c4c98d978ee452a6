"""RoPE as the models you use configure it: read a configuration, get what the model's code does.

::

    from rope_edu import rope_spec
    spec = rope_spec(config)            # a transformers config object, or a config.json dict
    print(spec.describe())              # rotated dims, pair layout, base, scaling, attention factor
    q_rot = spec.apply(q, positions)    # what the family's code does to a query

Each supported family is one row of data in :data:`FAMILIES` (a :class:`Family`): how that family
names its RoPE fields (``rope_parameters``, flat or nested by layer type, or ``rope_scaling`` +
``rope_theta``, ``rotary_pct``, ``rotary_dim``, ``qk_rope_head_dim``, ``no_rope_layers``, ...) and
what its code in Hugging Face ``transformers`` (pinned 5.24.0 in ``requirements.txt``) does with
them: how many coordinates of a head rotate and where they sit, which coordinates form a pair (the
book's layouts, :data:`rope_edu.LAYOUTS`), the frequencies (one entry of :data:`ROPE_TYPES` per
``rope_type``, most of them :mod:`rope_edu.scaling`'s methods), the factor on cos and sin, and
which layers use RoPE at all. One standard reader turns a row and a configuration into a
:class:`RopeSpec`; only GPT-J/CodeGen and MiniMind have readers of their own. Families of the
installed ``transformers`` that rope_spec refuses are listed, with what is missing, in
:data:`UNSUPPORTED`. ``tests/test_models.py`` checks families against their rotary-embedding class
and apply function; ``tests/test_model_sweep.py`` runs every decoder-only RoPE family of the
installed ``transformers`` layer by layer. This package imports neither ``transformers`` nor ``torch``.

The package, one concern per module:

* :mod:`.config`: reading a configuration (fields, bases, rotated fractions);
* :mod:`.rope_types`: :data:`ROPE_TYPES`, one entry per ``rope_type`` (its parameter reader and its
  frequency function);
* :mod:`.family` and :mod:`.layers`: the :class:`Family` record and the layer rules (one tagged value
  per family, one dispatch table, :data:`~rope_edu.models.layers.LAYER_RULES`);
* :mod:`.registry`: :data:`FAMILIES` and the tables beside it, data only;
* :mod:`.reader`: the standard reader of a row, and the functions rows name;
* :mod:`.spec`: :class:`RopeSpec` and :func:`rope_spec`;
* :mod:`.published`: :data:`PUBLISHED` and :data:`PUBLISHED_2025`, read from ``rope_edu/data/*.json``;
* :mod:`.mirrored`: :data:`CALLABLES`, the functions the "Check your model" page's JavaScript
  interpreter implements under the same names, and ``TABLES``, the tables it reads as data.

What ``transformers`` 5.24 does silently, and what rope_spec does about it:

* Several config classes drop a ``rope_theta`` keyword and keep their default base
  (``GPTNeoXConfig``, which reads ``rotary_emb_base``; ``Gemma4TextConfig``, ``Ministral3Config``,
  ``ApertusConfig``, ``CwmConfig``...: :attr:`Family.ignored_theta`); ``Olmo3Config`` gives it to the
  full-attention layers only, the sliding ones keep 500000. rope_spec uses the base the code uses and
  records the ignored value in :attr:`RopeSpec.defaults`.
* A configuration with both ``rope_parameters`` and ``rope_scaling``: the config class keeps
  ``rope_scaling`` and drops the rest of ``rope_parameters``, its ``rope_theta`` included (a Qwen3
  config.json with the model card's YaRN block added reads base 10000 instead of 1e6). rope_spec
  refuses any two fields that state the same value differently, naming both values.
* For multi-head latent attention (DeepSeek-V3, Kimi K2, GLM-4.7-Flash, Mistral 4...) ``head_dim`` in
  ``to_dict()`` is only the rotary part (``qk_rope_head_dim``); rope_spec reads the query head as
  ``qk_nope_head_dim + qk_rope_head_dim``.
* YaRN reads ``truncate`` from the top level of ``rope_parameters``: with parameters nested by layer
  type (OLMo 3), a per-layer-type ``truncate`` is never read; rope_spec uses what the code reads.
* Config classes write into the ``rope_scaling`` / ``rope_parameters`` dicts passed to them
  (``rope_theta``, ``rope_type``...): pass copies.

Nothing falls back silently to a value the configuration does not state. Where ``transformers``
itself documents a default for a RoPE field that a configuration dict leaves out (``rope_theta``,
``partial_rotary_factor``, YaRN's ``beta_fast``...), the same default is used and listed in
:attr:`RopeSpec.defaults` (and by :meth:`RopeSpec.describe`); anything else missing is an error
that names the field.
"""

from __future__ import annotations

from .config import DEFAULT_KINDS, Default
from .family import QK_NORM, Family
from .layers import LAYER_RULES, NOT_ATTENTION, LayerRule
from .mirrored import CALLABLES
from .published import PUBLISHED, PUBLISHED_2025, Published
from .registry import FAMILIES, MODEL_TYPES, UNSUPPORTED
from .rope_types import ROPE_TYPES, RopeType
from .spec import RopeSpec, rope_spec, unwrap

__all__ = [
    "CALLABLES",
    "FAMILIES",
    "LAYER_RULES",
    "NOT_ATTENTION",
    "UNSUPPORTED",
    "MODEL_TYPES",
    "PUBLISHED",
    "PUBLISHED_2025",
    "QK_NORM",
    "DEFAULT_KINDS",
    "Default",
    "Family",
    "LayerRule",
    "Published",
    "ROPE_TYPES",
    "RopeSpec",
    "RopeType",
    "rope_spec",
    "unwrap",
]
