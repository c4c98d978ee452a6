// Reading a configuration: rope_edu/models/config.py (the config wrapper, its Default records) and
// rope_edu/models/rope_types.py (the rope_types' parameter readers and read_rope, here readRope) in
// JavaScript: the same functions, camelCased, but the parameter readers, which keep their Python names
// (PARAMS: the registry's rope_types name them).

import {
  valueError, typeError, own, given, isMapping, isReal, truthy, typeName, repr, equal, positiveInt,
} from "./python.js";

// --- Default, ConfigReader and the field readers --------------------------------------------------

const KINDS = ["default", "unread", "fixed"];

/**
 * A value the reader filled in for a field the config leaves out, or a stated value the family's
 * code does not read: one line of the spec's defaults (String(record)). rope_edu.models.config's
 * Default, the same fields and the same line. `shown`: the value as Python writes it, where a
 * JavaScript number cannot say it is a float (YaRN's default betas, 32.0).
 */
export class Default {
  constructor(field, value, source, { kind = "default", rule = "", shown = null } = {}) {
    if (!KINDS.includes(kind)) throw new Error(`a Default's kind must be one of ${KINDS.join(", ")}, got ${kind}`);
    Object.assign(this, { field, value, source, kind, rule, shown });
  }
  toString() {
    const value = this.shown ?? repr(this.value);
    if (this.kind === "unread") return `${this.field} = ${value} ${this.source}`;
    if (this.kind === "fixed") return `${this.field} = ${value}, no scaling ${this.source}`;
    const rule = this.rule ? `${this.rule} = ` : "";
    return `${this.field} = ${rule}${value} (${this.source}; the config does not state it)`;
  }
}

export class Config {
  constructor(data, modelType, family = null, records = null) {
    this.data = data;
    this.modelType = modelType;
    this.family = family;  // the registry row being read (its class_defaults)
    this.records = records ?? [];  // Default records, in the order they were made
  }
  /** The records as the spec's defaults show them. */
  get defaults() { return this.records.map(String); }
  record(field, value, source, options = {}) { this.records.push(new Default(field, value, source, options)); }
  /** Drop the records of `field` (a value read again from another field). */
  forget(field) { this.records.splice(0, this.records.length, ...this.records.filter((r) => r.field !== field)); }
  /** The same config with `data` instead (per-layer overrides), recording into the same records. */
  derive(data) { return new Config(data, this.modelType, this.family, this.records); }
  get(name) { return own(this.data, name); }
  has(name) { return given(this.get(name)); }
  require(name, why = "") {
    const value = this.get(name);
    if (!given(value)) throw valueError(`the ${repr(this.modelType)} config is missing the field ${repr(name)}${why}`);
    return value;
  }
  default(name, value, source) {
    if (this.has(name)) return this.get(name);
    this.record(name, value, source);
    return value;
  }
  classDefault(name) {
    if (!this.family || !Object.prototype.hasOwnProperty.call(this.family.class_defaults || {}, name)) {
      throw new Error(`the family row has no class_defaults entry for ${name}`);
    }
    return this.default(name, this.family.class_defaults[name], `${this.family.label} config class default`);
  }
  size(name) { return positiveInt(this.require(name), name); }
}

export function headDim(cfg, hidden = "hidden_size", heads = "num_attention_heads") {
  if (cfg.has("head_dim")) return positiveInt(cfg.get("head_dim"), "head_dim");
  return splitHeads(cfg, hidden, heads);
}

export function splitHeads(cfg, hidden = "hidden_size", heads = "num_attention_heads") {
  const size = cfg.size(hidden), n = cfg.size(heads);
  if (size % n) throw valueError(`${hidden} = ${size} is not a multiple of ${heads} = ${n}`);
  return Math.floor(size / n);
}

export function renameType(block) {
  if (Object.prototype.hasOwnProperty.call(block, "type") && !Object.prototype.hasOwnProperty.call(block, "rope_type")) {
    const { type, ...rest } = block;
    return { ...rest, rope_type: type };
  }
  return block;
}

export function ropeBlock(cfg, ignored = [], label = "") {
  const blocks = [];
  for (const name of ["rope_parameters", "rope_scaling"]) {
    const value = cfg.get(name);
    if (!given(value)) continue;
    if (ignored.includes(name)) {
      cfg.record(name, value, `is not read: ${label}'s config class keeps ${name} as a field of ` +
        "its own and never moves it into rope_parameters, so its code uses plain RoPE at rope_theta", { kind: "unread" });
      continue;
    }
    if (!isMapping(value)) throw typeError(`${name} must be a dict, got ${repr(value)} of type ${typeName(value)}`);
    blocks.push([name, renameType({ ...value })]);
  }
  if (!blocks.length) return [{}, "rope_parameters"];
  if (blocks.length === 2) {
    const [[n1, b1], [n2, b2]] = blocks;
    const clash = Object.keys(b1).filter((k) => Object.prototype.hasOwnProperty.call(b2, k) && !equal(b1[k], b2[k])).sort();
    if (clash.length) {
      const values = clash.map((k) => `${n1}.${k} = ${repr(b1[k])} but ${n2}.${k} = ${repr(b2[k])}`).join("; ");
      throw valueError(`rope_parameters and rope_scaling disagree: ${values}. transformers 5 would keep rope_scaling ` +
        "only and drop the rest of rope_parameters (its rope_theta included); give one of them");
    }
    // no clash, but transformers 5 still keeps rope_scaling alone (transformers 4 never reads rope_parameters)
    for (const k of Object.keys(b1).filter((k) => !Object.prototype.hasOwnProperty.call(b2, k)).sort()) {
      cfg.record(`${n1}.${k}`, b1[k], `is not read: transformers 5 keeps ${n2} alone when a config ` +
        `has both (and transformers 4 never reads ${n1})`, { kind: "unread" });
    }
    return [b2, n2];
  }
  return [blocks[0][1], blocks[0][0]];
}

function theta(cfg, block, where, keys, dflt, source) {
  const values = [[`${where}.rope_theta`, own(block, "rope_theta")], ...keys.map((k) => [k, cfg.get(k)])];
  const name0 = keys.length ? keys[0] : `${where}.rope_theta`;
  const stated = values.filter(([, v]) => given(v));
  if (new Set(stated.map(([, v]) => (isReal(v) ? `n${v}` : repr(v)))).size > 1) {
    throw valueError(`the config states different bases: ${stated.map(([n, v]) => `${n} = ${repr(v)}`).join(", ")}`);
  }
  if (stated.length) return base(stated[0][1], stated[0][0]);
  if (dflt === null) throw valueError(`the ${repr(cfg.modelType)} config is missing the field ${repr(name0)} (the RoPE base)`);
  cfg.record(name0, dflt, source);
  return dflt;
}

export function base(value, name) {
  if (!isReal(value)) throw typeError(`${name} must be a real number > 1, got ${repr(value)} of type ${typeName(value)}`);
  if (!Number.isFinite(value) || value <= 1) throw valueError(`${name} must be a finite real number > 1, got ${value}`);
  return value;
}

export function param(block, name, where) {
  const value = own(block, name);
  if (!given(value)) {
    const ropeType = given(own(block, "rope_type")) ? block.rope_type : "default";
    throw valueError(`${where} of rope_type ${repr(ropeType)} is missing the field ${repr(name)}`);
  }
  return value;
}

function originalLength(cfg, block, where, topLevelOriginal = false) {
  if (topLevelOriginal && cfg.has("original_max_position_embeddings")) return cfg.get("original_max_position_embeddings");
  if (given(own(block, "original_max_position_embeddings"))) return block.original_max_position_embeddings;
  const value = cfg.require("max_position_embeddings", ` (needed because ${where} does not state ` +
    "original_max_position_embeddings)");
  cfg.record(`${where}.original_max_position_embeddings`, value, "transformers' standardize_rope_params",
    { rule: "max_position_embeddings" });
  return value;
}

// --- the scaling types' parameter readers, by their Python names -----------------------------

function _default_params() { return {}; }

function _linear_params(cfg, block, where) { return { factor: param(block, "factor", where) }; }

function _dynamic_params(cfg, block, where) {
  return {
    factor: param(block, "factor", where),
    original_max_position_embeddings: cfg.require("max_position_embeddings",
      " (dynamic NTK rescales past max_position_embeddings)"),
  };
}

function _yarn_params(cfg, block, where, { nested = false } = {}) {
  const params = { factor: param(block, "factor", where), original_max_position_embeddings: originalLength(cfg, block, where) };
  for (const [name, dflt] of [["beta_fast", 32], ["beta_slow", 1]]) {
    if (truthy(own(block, name))) params[name] = block[name];
    else cfg.record(`${where}.${name}`, dflt, "transformers' YaRN default", { shown: `${repr(dflt)}.0` });
  }
  if (nested) {
    // transformers' YaRN reads truncate from the top level of rope_parameters (see models.py)
    const outer = cfg.get("rope_parameters");
    const truncate = isMapping(outer) && block !== outer ? (Object.prototype.hasOwnProperty.call(outer, "truncate") ? outer.truncate : true) : true;
    if (given(own(block, "truncate")) && !equal(block.truncate, truncate)) {
      cfg.record(`${where}.truncate`, block.truncate, "is not read: transformers' YaRN reads " +
        `truncate from the top level of rope_parameters (${repr(truncate)})`, { kind: "unread" });
    }
    params.truncate = truncate;
  } else if (given(own(block, "truncate"))) {
    params.truncate = block.truncate;
  } else {
    cfg.record(`${where}.truncate`, true, "transformers' YaRN default");
  }
  if (given(own(block, "attention_factor"))) params.attention_factor = block.attention_factor;
  if (truthy(own(block, "mscale")) && truthy(own(block, "mscale_all_dim"))) {
    params.mscale = block.mscale;
    params.mscale_all_dim = block.mscale_all_dim;
  }
  return params;
}

function _llama3_params(cfg, block, where) {
  return {
    factor: param(block, "factor", where),
    low_freq_factor: param(block, "low_freq_factor", where),
    high_freq_factor: param(block, "high_freq_factor", where),
    original_max_position_embeddings: originalLength(cfg, block, where),
  };
}

function _longrope_params(cfg, block, where, { topLevelOriginal = false } = {}) {
  const original = originalLength(cfg, block, where, topLevelOriginal);
  const asList = (v, name) => {
    if (!Array.isArray(v)) throw typeError(`${name} must be a sequence of positive real numbers (one per rotated pair), got ${repr(v)}`);
    return v;
  };
  const params = {
    short_factor: asList(param(block, "short_factor", where), "short_factor"),
    long_factor: asList(param(block, "long_factor", where), "long_factor"),
    original_max_position_embeddings: original,
  };
  if (given(own(block, "factor"))) {
    params.factor = block.factor;
  } else {
    const mpe = cfg.require("max_position_embeddings", " (LongRoPE's factor is max_position_embeddings / " +
      `original_max_position_embeddings when ${where} has no factor)`);
    params.factor = positiveInt(mpe, "max_position_embeddings") / positiveInt(original, "original_max_position_embeddings");
    cfg.record(`${where}.factor`, params.factor, "transformers' LongRoPE rule",
      { rule: "max_position_embeddings / original_max_position_embeddings" });
  }
  if (given(own(block, "attention_factor"))) params.attention_factor = block.attention_factor;
  return params;
}

function _ntk_alpha_params(cfg, block, where) {
  // Hunyuan: "dynamic" with alpha (see rope_edu/models/rope_types.py)
  const factor = param(block, "factor", where);
  cfg.require("head_dim", " (the NTK-alpha base rope_theta * alpha**(d / (d - 2)) reads d = head_dim; " +
    "without it transformers fails)");
  cfg.record(`${where}.factor`, factor, `is not used: with alpha = ${repr(block.alpha)} the code stretches ` +
    "the base (NTK-alpha) instead of dynamic NTK", { kind: "unread" });
  return { alpha: param(block, "alpha", where) };
}

function _proportional_params(cfg, block) {
  return given(own(block, "factor")) ? { factor: block.factor } : {};
}

export function readRope(reg, cfg, { thetaKeys = ["rope_theta"], defaultTheta = reg.hf_theta, thetaSource = "transformers' default_theta",
  block = null, where = null, rename = null, allowed = null, topLevelOriginal = false, nested = false, retype = null,
  note = "" } = {}) {
  if (block === null) [block, where] = ropeBlock(cfg);
  const b = theta(cfg, block, where, thetaKeys, defaultTheta, thetaSource);
  let ropeType;
  if (!given(own(block, "rope_type"))) {
    ropeType = "default";
    if (Object.keys(block).length) cfg.record(`${where}.rope_type`, "default", "transformers' default");
  } else {
    ropeType = block.rope_type;
  }
  if (typeof ropeType === "string" && rename && Object.prototype.hasOwnProperty.call(rename, ropeType)) ropeType = rename[ropeType];
  const reached = new Set();
  for (const [stated, [name, other]] of Object.entries(retype || {})) {
    reached.add(other);
    if (ropeType === stated && truthy(own(block, name))) ropeType = other;  // the code tests rope_parameters.get(name)
  }
  const valid = allowed ? [...allowed] : Object.keys(reg.rope_types).filter((t) => !reg.rope_types[t].retyped_only || reached.has(t));
  if (typeof ropeType !== "string" || !valid.includes(ropeType)) {
    throw valueError(`unknown ${where}.rope_type ${repr(ropeType)} for model_type ${repr(cfg.modelType)}; ` +
      `expected one of ${valid.map(repr).join(", ")}` + (note ? ` (${note})` : ""));
  }
  const reader = reg.rope_types[ropeType].read;
  if (!Object.prototype.hasOwnProperty.call(PARAMS, reader)) {
    throw new Error(`the registry names a parameter reader ${reader} that this interpreter does not implement`);
  }
  const params = PARAMS[reader](cfg, block, where, { topLevelOriginal, nested });
  return { base: b, rope_type: ropeType, params, where, block: { ...block } };
}

export function fraction(cfg, rope, names, dflt, source) {
  const stated = [];
  for (const name of names) {
    for (const [value, label] of [[own(rope.block, name), `${rope.where}.${name}`], [cfg.get(name), name]]) {
      if (!given(value)) continue;
      if (!isReal(value)) throw typeError(`${label} must be a real number in (0, 1], got ${repr(value)}`);
      if (!(value > 0 && value <= 1)) throw valueError(`${label} must be a real number in (0, 1] (the rotated fraction of a head), got ${value}`);
      stated.push([value, label]);
    }
  }
  if (new Set(stated.map(([v]) => v)).size > 1) {
    throw valueError("the config states different rotated fractions: " + stated.map(([v, l]) => `${l} = ${repr(v)}`).join(", "));
  }
  if (stated.length) return stated[0];
  if (dflt === null) throw valueError(`the ${repr(cfg.modelType)} config is missing the field ${repr(names[0])}`);
  if (dflt !== 1) cfg.record(names[0], dflt, source);
  return [dflt, names[0]];
}

export function rotated(dim, frac, label) {
  const dims = Math.trunc(dim * frac);
  if (dims <= 0 || dims % 2) {
    throw valueError(`${label} = ${frac} gives int(${dim} * ${frac}) = ${dims} rotated dims; ` +
      "RoPE rotates pairs, so this must be a positive even number");
  }
  return dims;
}

export function noPartial(cfg, rope) {
  for (const [value, label] of [[own(rope.block, "partial_rotary_factor"), `${rope.where}.partial_rotary_factor`],
    [cfg.get("partial_rotary_factor"), "partial_rotary_factor"]]) {
    if (given(value) && value !== 1) {
      throw valueError(`${label} = ${repr(value)}, but ${repr(cfg.modelType)} code rotates the whole head ` +
        "(its default rotary embedding ignores partial_rotary_factor while its scaled ones do not)");
    }
  }
}

/** The rope_types' parameter readers, by their Python names (RopeType.read in rope_edu.models.rope_types.ROPE_TYPES). */
export const PARAMS = {
  _default_params, _linear_params, _dynamic_params, _yarn_params, _llama3_params, _longrope_params, _proportional_params,
  _ntk_alpha_params,
};
