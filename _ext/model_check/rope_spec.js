// rope_spec in the reader's browser: the rules of rope_edu.models.rope_spec, interpreted in JavaScript.
//
// The rules themselves are data, exported from the package by rope_edu.spec_export.registry() (the
// book build writes them next to this file as registry.js): one row per family, the scaling types and
// their parameters, the layer rules, the wrappers, the published models. These files are only the
// interpreter, written a second time, one module per module of the package rope_edu/models/ (the same
// functions, camelCased): config.js (config.py), layers.js (layers.py), reader.js (reader.py) and this
// file (spec.py); the frequencies of rope_edu/scaling.py are in scaling.js, Python's view of JSON values
// in python.js. tests/test_model_check.py feeds the same configurations to both and requires the same
// spec. Callables of the registry come as {callable: name} and are implemented under that name
// (CALLABLES, reader.js). Plain ES modules: node imports them in the tests, the page in the browser.

import { valueError, typeError, own, given, isMapping, typeName, repr, listRepr, checkInt, checkChoice } from "./python.js";
import { frequencies, plainFrequencies, proportional } from "./scaling.js";
import { Config } from "./config.js";
import { call, readFamily } from "./reader.js";

export { SpecError, repr } from "./python.js";
export { CALLABLES } from "./reader.js";
export { LAYER_RULES } from "./layers.js";

export const REGISTRY_VERSION = 4;

/** The registry with every family row completed from family_defaults (the export leaves default fields out). */
function complete(reg) {
  if (!Object.prototype.hasOwnProperty.call(reg, "completed")) {
    for (const [key, row] of Object.entries(reg.families)) reg.families[key] = { ...reg.family_defaults, ...row };
    Object.defineProperty(reg, "completed", { value: true });
  }
  return reg;
}

// --- the spec ------------------------------------------------------------------------------------

function unwrap(reg, data) {
  if (!isMapping(data)) {
    throw typeError(`config must be a transformers configuration object or a dict of its fields (config.json), got ${typeName(data)}`);
  }
  let modelType = own(data, "model_type");
  if (typeof modelType === "string" && Object.prototype.hasOwnProperty.call(reg.wrappers, modelType)) {
    const [key, inner] = reg.wrappers[modelType];
    let sub = own(data, key);
    if (!given(sub) && reg.flat_wrappers.includes(modelType)) sub = Object.fromEntries(Object.entries(data).filter(([k]) => k !== "model_type"));
    if (!given(sub)) throw valueError(`the ${repr(modelType)} config is missing the field ${repr(key)} (its language model)`);
    if (!isMapping(sub)) throw typeError(`config must be a transformers configuration object or a dict of its fields (config.json), got ${typeName(sub)}`);
    data = { ...sub };
    if (!Object.prototype.hasOwnProperty.call(data, "model_type")) data.model_type = inner;
    modelType = data.model_type;
  }
  return [data, modelType];
}

/**
 * rope_edu.rope_spec in JavaScript: what one layer of the model does with RoPE.
 * @param {object} reg the registry (rope_edu.spec_export.registry())
 * @param {object} config a parsed config.json
 * @param {{layerType?: string, layer?: number}} select where the layers differ
 * @returns {object} the RopeSpec fields (snake_case, as in Python) plus inv_freq, wavelengths and describe()
 */
export function ropeSpec(reg, config, { layerType = null, layer = null } = {}) {
  if (!reg || reg.version !== REGISTRY_VERSION) throw new Error(`registry version ${reg && reg.version}, this interpreter reads ${REGISTRY_VERSION}`);
  complete(reg);
  const [data, modelType] = unwrap(reg, config);
  if (!given(modelType)) throw valueError("the config is missing the field 'model_type' (which family it is, as in config.json)");
  if (typeof modelType === "string" && Object.prototype.hasOwnProperty.call(reg.unsupported, modelType)) {
    throw valueError(`model_type ${repr(modelType)} is not supported by rope_spec: ${reg.unsupported[modelType]}`);
  }
  if (typeof modelType !== "string" || !Object.prototype.hasOwnProperty.call(reg.model_types, modelType)) {
    throw valueError(`unknown model_type ${repr(modelType)}: rope_spec has no data for this family ` +
      `(its layout, rotated dims and layer rules); supported: ${Object.keys(reg.model_types).map(repr).join(", ")}`);
  }
  const family = reg.families[reg.model_types[modelType]];
  let cfg = new Config(data, modelType, family);
  let parts;
  if (family.read) parts = call(family.read.callable, reg, cfg, layerType, layer);
  else [parts, cfg] = readFamily(reg, family, cfg, layerType, layer);
  const rope = parts.rope;
  delete parts.rope;
  const { head_dim: dim, rotary_dim: r } = parts;
  parts.rotary_offset = parts.rotary_offset ?? 0;
  parts.output_layout = parts.output_layout ?? parts.layout;
  for (const name of ["layout", "output_layout"]) checkChoice(parts[name], ["interleaved", "half"], name);
  if (r <= 0 || r % 2 || parts.rotary_offset + r > dim) throw valueError(`rotated dims ${r} at offset ${parts.rotary_offset} do not fit a head of ${dim}`);
  const loaded = reg.rope_types[rope.rope_type].loaded_seq_len;
  const extra = loaded !== null ? { seq_len: rope.params[loaded] } : {};
  const [, attentionFactor] = frequencies(reg, rope.rope_type, r, rope.base, { ...rope.params, ...extra }, parts.rotating_pairs);
  return makeSpec(reg, {
    family: family.key, model_type: modelType, head_dim: dim, rotary_dim: r, rotary_offset: parts.rotary_offset,
    layout: parts.layout, output_layout: parts.output_layout, base: rope.base, rope_type: rope.rope_type, rope_params: { ...rope.params },
    attention_factor: attentionFactor, softmax_scale_factor: parts.softmax_scale_factor ?? 1, uses_rope: parts.uses_rope ?? true,
    qk_norm: parts.qk_norm ?? "none", layer_type: parts.layer_type ?? null, layer: parts.layer ?? null,
    temperature_tuning: parts.temperature_tuning ?? null, max_positions: parts.max_positions ?? null, defaults: [...cfg.defaults],
    mrope_section: parts.mrope_section ?? null, mrope_assignment: parts.mrope_assignment ?? null,
    rotating_pairs: parts.rotating_pairs ?? null, no_rope_reason: parts.no_rope_reason ?? "", clockwise: parts.clockwise ?? false,
    query_scale: parts.query_scale ?? null, query_power: parts.query_power ?? null, note: parts.note ?? "",
  });
}

function makeSpec(reg, fields) {
  const spec = { ...fields };
  spec.depends_on_length = reg.rope_types[spec.rope_type].depends_on_length;
  spec.loaded_seq_len = reg.rope_types[spec.rope_type].loaded_seq_len;
  /** Frequencies of the rotary_dim / 2 pairs (RopeSpec.inv_freq). */
  spec.inv_freq = (seqLen = null) => {
    if (!spec.uses_rope) throw valueError(`this layer uses no RoPE (uses_rope is False: a NoPE layer of ${repr(spec.family)}); it has no frequencies`);
    const params = { ...spec.rope_params };
    if (spec.depends_on_length) {
      if (seqLen !== null) checkInt(seqLen, "seq_len", 1);
      else if (spec.loaded_seq_len !== null) seqLen = params[spec.loaded_seq_len];
      params.seq_len = seqLen;
    }
    return frequencies(reg, spec.rope_type, spec.rotary_dim, spec.base, params, spec.rotating_pairs)[0];
  };
  /** Plain RoPE's frequencies at this base, for the pairs the scaling did not move. */
  spec.plain_inv_freq = () => (spec.rotating_pairs !== null
    ? proportional(spec.rotary_dim, spec.base, spec.rotating_pairs)[0] : plainFrequencies(spec.rotary_dim, spec.base));
  spec.wavelengths = (seqLen = null) => spec.inv_freq(seqLen).map((t) => 2 * Math.PI / t);
  spec.describe = () => describe(reg, spec);
  return spec;
}

// --- describe(), as RopeSpec.describe writes it -----------------------------------------------------

/** Python's format(x, ".{p}g"). */
export function fmtG(x, p = 6) {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (x === 0) return "0";
  const [mant, expText] = x.toExponential(Math.max(p - 1, 0)).split("e");
  const e = Number(expText);
  const strip = (s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (e >= -4 && e < p) return strip(x.toFixed(Math.max(p - 1 - e, 0)));
  return `${strip(mant)}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

const grouped = (x) => Math.round(x).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const short = (v) => (Array.isArray(v) && v.length > 4 ? `[${v.length} values: ${fmtG(v[0], 4)} .. ${fmtG(v[v.length - 1], 4)}]` : repr(v));

function describe(reg, s) {
  const where = [];
  if (s.layer !== null) where.push(`layer ${s.layer}`);
  if (s.layer_type !== null) where.push(`layer type ${repr(s.layer_type)}`);
  const lines = [`${reg.families[s.family].label} (model_type ${repr(s.model_type)})` + (where.length ? ", " + where.join(", ") : "")];
  if (!s.uses_rope) {
    lines.push(`  NoPE layer: queries and keys are not rotated (head_dim ${s.head_dim})` + (s.no_rope_reason ? `: ${s.no_rope_reason}` : ""));
    if (s.temperature_tuning) {
      const [fs, sc] = s.temperature_tuning;
      lines.push(`  queries scaled by 1 + ${fmtG(sc)} * ln(1 + floor((m + 1) / ${fmtG(fs)})) at position m`);
    }
    if (s.query_power) {
      const [length, power] = s.query_power;
      lines.push(`  queries scaled by (1 + (m + 1) / ${fmtG(length)}) ** ${fmtG(power)} at position m`);
    }
  } else {
    const start = s.rotary_offset, r = s.rotary_dim;
    const pairs = s.layout === "half"
      ? (start ? `half-split pairs (${start} + i, ${start} + i + ${r / 2})` : `half-split pairs (i, i + ${r / 2})`)
      : (start ? `interleaved pairs (${start} + 2i, ${start} + 2i + 1)` : "interleaved pairs (2i, 2i + 1)");
    lines.push(`  head_dim ${s.head_dim}: rotates ${r} dims (${(100 * r / s.head_dim).toFixed(0)}%), coordinates ${start}..${start + r - 1}, in ${pairs}`);
    if (s.rotating_pairs !== null) {
      lines.push(`  proportional: only pairs 0..${s.rotating_pairs - 1} turn (frequencies over the whole ` +
        `head, b^(-2i/${r})); pairs ${s.rotating_pairs}..${r / 2 - 1} stay put`);
    }
    if (s.mrope_section) {
      lines.push(`  M-RoPE: pairs split ${listRepr(s.mrope_section)} among (time, height, width), ` +
        `${s.mrope_assignment}; positions of shape (3, seq) or (3, batch, seq)`);
    }
    if (s.output_layout !== s.layout) lines.push(`  writes the rotated pairs back in ${repr(s.output_layout)} order (queries and keys alike)`);
    if (r < s.head_dim) lines.push(`  ${s.head_dim - r} coordinates pass through without position`);
    const params = Object.entries(s.rope_params).map(([k, v]) => `${k}=${short(v)}`).join(", ");
    lines.push(`  base ${grouped(s.base)}; scaling ${repr(s.rope_type)}` + (params ? `: ${params}` : ""));
    const wl = s.wavelengths().filter(Number.isFinite);
    lines.push(`  wavelengths ${fmtG(Math.min(...wl), 3)} .. ${fmtG(Math.max(...wl), 3)} positions` +
      (s.depends_on_length ? " (at loading; they change with the length)" : ""));
    if (s.attention_factor !== 1) {
      lines.push(`  attention factor ${fmtG(s.attention_factor)} on cos and sin (rotated logits x ${fmtG(s.attention_factor ** 2)})`);
    }
  }
  if (s.note) lines.push(`  note: ${s.note}`);
  if (s.softmax_scale_factor !== 1) lines.push(`  softmax scale x ${fmtG(s.softmax_scale_factor)} (YaRN's mscale squared)`);
  if (s.max_positions !== null) lines.push(`  positions limited to 0..${s.max_positions - 1} (precomputed table)`);
  lines.push(`  QK-norm: ${reg.qk_norm[s.qk_norm]}`);
  for (const text of s.defaults) lines.push(`  default used: ${text}`);
  return lines.join("\n");
}

/** The language model's config (the text_config of a multimodal wrapper) and its family row, or nulls. */
export function familyOf(reg, config) {
  complete(reg);
  try {
    const [data, modelType] = unwrap(reg, config);
    const key = typeof modelType === "string" ? own(reg.model_types, modelType) : undefined;
    return { data, modelType: modelType ?? null, family: key ? reg.families[key] : null };
  } catch {
    return { data: isMapping(config) ? config : null, modelType: null, family: null };
  }
}
