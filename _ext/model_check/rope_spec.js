// rope_spec in the reader's browser: the rules of rope_edu.models.rope_spec, interpreted in JavaScript.
//
// The rules themselves are data, exported from the package by rope_edu.spec_export.registry() (the
// book build writes them next to this file as registry.js): one row per family, the scaling types and
// their parameters, the wrappers, the published models. This file is only the interpreter, written a
// second time: it follows rope_edu/models.py function by function (the same names, camelCased; the
// frequencies of rope_edu/scaling.py are in scaling.js, Python's view of JSON values in python.js), and
// tests/test_model_check.py feeds the same configurations to both and requires the same spec.
// Callables of the registry come as {callable: name} and are implemented below under that name
// (CALLABLES). A plain ES module: node imports it in the tests, the page imports it in the browser.

import {
  valueError, typeError, own, given, isMapping, isReal, isInteger, truthy, typeName, repr, equal, listRepr, positiveInt, checkInt, checkChoice,
} from "./python.js";
import { frequencies, plainFrequencies, proportional } from "./scaling.js";

export { SpecError, repr } from "./python.js";

export const REGISTRY_VERSION = 1;

// --- reading a configuration (models.py: _Config and the field readers) ----------------------

class Config {
  constructor(data, modelType) {
    this.data = data;
    this.modelType = modelType;
    this.defaults = [];
  }
  get(name) { return own(this.data, name); }
  has(name) { return given(this.get(name)); }
  require(name, why = "") {
    const value = this.get(name);
    if (!given(value)) throw valueError(`the ${repr(this.modelType)} config is missing the field ${repr(name)}${why}`);
    return value;
  }
  default(name, value, source) {
    if (this.has(name)) return this.get(name);
    this.defaults.push(`${name} = ${repr(value)} (${source}; the config does not state it)`);
    return value;
  }
  size(name) { return positiveInt(this.require(name), name); }
}

function headDim(cfg, hidden = "hidden_size", heads = "num_attention_heads") {
  if (cfg.has("head_dim")) return positiveInt(cfg.get("head_dim"), "head_dim");
  return splitHeads(cfg, hidden, heads);
}

function splitHeads(cfg, hidden = "hidden_size", heads = "num_attention_heads") {
  const size = cfg.size(hidden), n = cfg.size(heads);
  if (size % n) throw valueError(`${hidden} = ${size} is not a multiple of ${heads} = ${n}`);
  return Math.floor(size / n);
}

function renameType(block) {
  if (Object.prototype.hasOwnProperty.call(block, "type") && !Object.prototype.hasOwnProperty.call(block, "rope_type")) {
    const { type, ...rest } = block;
    return { ...rest, rope_type: type };
  }
  return block;
}

function ropeBlock(cfg) {
  const blocks = [];
  for (const name of ["rope_parameters", "rope_scaling"]) {
    const value = cfg.get(name);
    if (!given(value)) continue;
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
      cfg.defaults.push(`${n1}.${k} = ${repr(b1[k])} is not read: transformers 5 keeps ${n2} alone when a config ` +
        `has both (and transformers 4 never reads ${n1})`);
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
  cfg.defaults.push(`${name0} = ${repr(dflt)} (${source}; the config does not state it)`);
  return dflt;
}

function base(value, name) {
  if (!isReal(value)) throw typeError(`${name} must be a real number > 1, got ${repr(value)} of type ${typeName(value)}`);
  if (!Number.isFinite(value) || value <= 1) throw valueError(`${name} must be a finite real number > 1, got ${value}`);
  return value;
}

function param(block, name, where) {
  const value = own(block, name);
  if (!given(value)) {
    const ropeType = given(own(block, "rope_type")) ? block.rope_type : "default";
    throw valueError(`${where} of rope_type ${repr(ropeType)} is missing the field ${repr(name)}`);
  }
  return value;
}

function originalLength(cfg, block, where, topLevelFirst = false) {
  if (topLevelFirst && cfg.has("original_max_position_embeddings")) return cfg.get("original_max_position_embeddings");
  if (given(own(block, "original_max_position_embeddings"))) return block.original_max_position_embeddings;
  const value = cfg.require("max_position_embeddings", ` (needed because ${where} does not state ` +
    "original_max_position_embeddings)");
  cfg.defaults.push(`${where}.original_max_position_embeddings = max_position_embeddings = ${repr(value)} ` +
    "(transformers' standardize_rope_params; the config does not state it)");
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
    else cfg.defaults.push(`${where}.${name} = ${repr(dflt)}.0 (transformers' YaRN default; the config does not state it)`);
  }
  if (nested) {
    // transformers' YaRN reads truncate from the top level of rope_parameters (see models.py)
    const outer = cfg.get("rope_parameters");
    const truncate = isMapping(outer) && block !== outer ? (Object.prototype.hasOwnProperty.call(outer, "truncate") ? outer.truncate : true) : true;
    if (given(own(block, "truncate")) && !equal(block.truncate, truncate)) {
      cfg.defaults.push(`${where}.truncate = ${repr(block.truncate)} is not read: transformers' YaRN reads ` +
        `truncate from the top level of rope_parameters (${repr(truncate)})`);
    }
    params.truncate = truncate;
  } else if (given(own(block, "truncate"))) {
    params.truncate = block.truncate;
  } else {
    cfg.defaults.push(`${where}.truncate = True (transformers' YaRN default; the config does not state it)`);
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

function _longrope_params(cfg, block, where, { topLevelFirst = false } = {}) {
  const original = originalLength(cfg, block, where, topLevelFirst);
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
    cfg.defaults.push(`${where}.factor = max_position_embeddings / original_max_position_embeddings = ${repr(params.factor)} ` +
      "(transformers' LongRoPE rule; the config does not state it)");
  }
  if (given(own(block, "attention_factor"))) params.attention_factor = block.attention_factor;
  return params;
}

function _proportional_params(cfg, block) {
  return given(own(block, "factor")) ? { factor: block.factor } : {};
}

function readRope(reg, cfg, { thetaKeys = ["rope_theta"], defaultTheta = reg.hf_theta, thetaSource = "transformers' default_theta",
  block = null, where = null, rename = null, allowed = null, topLevelOriginal = false, nested = false } = {}) {
  if (block === null) [block, where] = ropeBlock(cfg);
  const b = theta(cfg, block, where, thetaKeys, defaultTheta, thetaSource);
  let ropeType;
  if (!given(own(block, "rope_type"))) {
    ropeType = "default";
    if (Object.keys(block).length) cfg.defaults.push(`${where}.rope_type = 'default' (transformers' default; the config does not state it)`);
  } else {
    ropeType = block.rope_type;
  }
  if (typeof ropeType === "string" && rename && Object.prototype.hasOwnProperty.call(rename, ropeType)) ropeType = rename[ropeType];
  const valid = allowed ? [...allowed] : Object.keys(reg.scalings);
  if (typeof ropeType !== "string" || !valid.includes(ropeType)) {
    throw valueError(`unknown ${where}.rope_type ${repr(ropeType)} for model_type ${repr(cfg.modelType)}; ` +
      `expected one of ${valid.map(repr).join(", ")}`);
  }
  const [method, reader] = reg.scalings[ropeType];
  const params = call(reader, cfg, block, where, { topLevelFirst: topLevelOriginal, nested });
  return { base: b, method, params, where, block: { ...block } };
}

function fraction(cfg, rope, names, dflt, source) {
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
  if (dflt !== 1) cfg.defaults.push(`${names[0]} = ${repr(dflt)} (${source}; the config does not state it)`);
  return [dflt, names[0]];
}

function rotated(dim, frac, label) {
  const dims = Math.trunc(dim * frac);
  if (dims <= 0 || dims % 2) {
    throw valueError(`${label} = ${frac} gives int(${dim} * ${frac}) = ${dims} rotated dims; ` +
      "RoPE rotates pairs, so this must be a positive even number");
  }
  return dims;
}

function noPartial(cfg, rope) {
  for (const [value, label] of [[own(rope.block, "partial_rotary_factor"), `${rope.where}.partial_rotary_factor`],
    [cfg.get("partial_rotary_factor"), "partial_rotary_factor"]]) {
    if (given(value) && value !== 1) {
      throw valueError(`${label} = ${repr(value)}, but ${repr(cfg.modelType)} code rotates the whole head ` +
        "(its default rotary embedding ignores partial_rotary_factor while its scaled ones do not)");
    }
  }
}

// --- layers ----------------------------------------------------------------------------------

function checkTypes(types, name = "layer_types") {
  if (!Array.isArray(types) || !types.every((t) => typeof t === "string")) throw typeError(`${name} must be a list of strings, got ${repr(types)}`);
  return [...types];
}

function ropeFlags(cfg, source, intervalDefault = 4) {
  let flags = cfg.get("no_rope_layers");
  if (!given(flags)) {
    const interval = positiveInt(cfg.default("no_rope_layer_interval", intervalDefault, source), "no_rope_layer_interval");
    const n = cfg.size("num_hidden_layers");
    flags = Array.from({ length: n }, (_, i) => Number((i + 1) % interval !== 0));
  }
  if (!Array.isArray(flags) || !flags.every((f) => typeof f === "boolean" || isInteger(f))) {
    throw typeError(`no_rope_layers must be a list of 0/1 flags (1 = the layer uses RoPE), got ${repr(flags)}`);
  }
  return flags.map(Boolean);
}

function selectLayer(cfg, layerType, layer, types, known = []) {
  if (given(layerType) && typeof layerType !== "string") {
    throw typeError(`layer_type must be a string such as 'full_attention', got ${repr(layerType)}`);
  }
  if (given(layer)) {
    layer = checkInt(layer, "layer", 0);
    const count = ["num_hidden_layers", "n_layer", "num_layers"].find((k) => cfg.has(k)) ?? "num_hidden_layers";
    const n = types ? types.length : cfg.size(count);
    if (layer >= n) throw valueError(`layer must be a layer index in [0, ${n}) for this config, got ${layer}`);
    if (types) {
      if (given(layerType) && layerType !== types[layer]) {
        throw valueError(`layer_type ${repr(layerType)} does not match layer ${layer}, which is ${repr(types[layer])}`);
      }
      layerType = types[layer];
    }
  } else if (given(layerType)) {
    const valid = types ? [...new Set(types)].sort() : [...known];
    if (!valid.length) throw valueError(`layer_type ${repr(layerType)} given, but the ${repr(cfg.modelType)} config lists no layer_types`);
    checkChoice(layerType, valid, "layer_type");
  }
  return [given(layerType) ? layerType : null, given(layer) ? layer : null];
}

function thetaDefault(family, layerType) {
  const d = family.default_theta;
  if (isMapping(d)) return Object.prototype.hasOwnProperty.call(d, layerType) ? d[layerType] : d["*"];
  return d;
}

function nestedKeys(reg, family, block, types) {
  if (!isMapping(block)) return [];
  const labels = new Set([...(types || []), ...reg.local_global, ...(family.rope_types || []),
    ...Object.values(family.rope_keys || {}), ...(family.nope_layers ? family.nope_layers.slice(1) : [])]);
  return Object.keys(block).filter((k) => labels.has(k) && (block[k] === null || isMapping(block[k])));
}

function layerTypesOf(family, cfg, needed) {
  const types = cfg.get("layer_types");
  if (given(types)) return checkTypes(types);
  if (family.nope_layers && (needed || cfg.has("num_hidden_layers") || cfg.has("no_rope_layers"))) {
    const [interval, ropeType, nopeType] = family.nope_layers;
    return ropeFlags(cfg, `${family.label} config default`, interval).map((f) => (f ? ropeType : nopeType));
  }
  if (family.attention_indices && cfg.has("num_hidden_layers")) {
    const listed = truthy(cfg.get(family.attention_indices)) ? cfg.get(family.attention_indices) : [];
    return Array.from({ length: cfg.size("num_hidden_layers") }, (_, i) => (listed.includes(i) ? "full_attention" : "mamba"));
  }
  if (family.cycle_types && cfg.has(family.cycle_types) && cfg.has("num_hidden_layers")) {
    const cycle = checkTypes(cfg.get(family.cycle_types), family.cycle_types);
    return Array.from({ length: cfg.size("num_hidden_layers") }, (_, i) => cycle[i % cycle.length]);
  }
  if (family.pattern && (needed || cfg.has("num_hidden_layers"))) {
    const [name, dflt, other] = family.pattern;
    const rest = other ?? "sliding_attention";
    const every = positiveInt(cfg.default(name, dflt, `${family.label} config default`), name);
    return Array.from({ length: cfg.size("num_hidden_layers") }, (_, i) => ((i + 1) % every ? rest : "full_attention"));
  }
  return null;
}

function layerKind(reg, family, cfg, types, nested, flags, index, layerType) {
  if (reg.not_attention.includes(layerType)) return [false, null, `a ${repr(layerType)} layer has no attention, so no RoPE`];
  if (family.switch) {
    const [name, on, dflt] = family.switch;
    const value = cfg.default(name, dflt, `${family.label} config default`);
    if (!equal(value, on)) return [false, null, `${name} = ${repr(value)}: ${family.label} uses RoPE only when it is ${repr(on)}`];
  }
  if (family.rope_types && family.windowless !== "keep" && !cfg.has("sliding_window")) {
    if (family.windowless === "none") return [false, null, `${family.label} rotates only layers with a sliding window, and sliding_window is None`];
  } else if (family.rope_types && given(layerType) && !family.rope_types.includes(layerType)) {
    return [false, null, `${family.label} applies RoPE only in ${family.rope_types.map(repr).join(", ")} layers`];
  }
  if (family.nope_list && given(index)) {
    const marks = cfg.get(family.nope_list);
    if (!given(marks)) {
      throw valueError(`the ${repr(cfg.modelType)} config has no ${family.nope_list} (which layers use no RoPE); ` +
        `${family.label}'s config class builds one: pass the config object or its to_dict()`);
    }
    if (!Array.isArray(marks) || index >= marks.length) throw valueError(`${family.nope_list} must list one entry per layer, got ${repr(marks)}`);
    if (!truthy(marks[index])) return [false, null, `${family.nope_list}[${index}] = ${repr(marks[index])} marks a NoPE layer`];
  }
  if (family.nope_indices && given(index)) {
    const listed = cfg.get(family.nope_indices);
    if (!given(listed)) {
      throw valueError(`the ${repr(cfg.modelType)} config has no ${family.nope_indices} (which layers use no RoPE); ` +
        `${family.label}'s config class builds one: pass the config object or its to_dict()`);
    }
    if (Array.isArray(listed) && listed.includes(index)) return [false, null, `layer ${index} is in ${family.nope_indices} (no self-attention, no RoPE)`];
  }
  if (flags && given(index)) {
    if (index >= flags.length) throw valueError(`layer ${index} is beyond no_rope_layers (${flags.length} entries)`);
    if (!flags[index]) return [false, null, "no_rope_layers marks this layer NoPE"];
  }
  if (nested.length) {
    const block = cfg.get("rope_parameters");
    if (family.rope_keys) layerType = own(family.rope_keys, layerType) ?? own(family.rope_keys, "*") ?? null;
    if (!Object.prototype.hasOwnProperty.call(block, layerType)) {
      throw valueError(`rope_parameters is nested by layer type (${nested.map(repr).join(", ")}) but has no entry for ${repr(layerType)}`);
    }
    if (block[layerType] === null) return [false, null, `rope_parameters[${repr(layerType)}] is null: those layers use no RoPE`];
    return [true, layerType, ""];
  }
  if (family.local_theta || family.flat_types) return [true, layerType, ""];
  return [true, null, ""];
}

function droppedTheta(family, cfg, block, where, key) {
  for (const name of family.ignored_theta) {
    if (!cfg.has(name)) continue;
    const value = cfg.get(name);
    if (given(own(block, "rope_theta"))) {
      if (base(value, name) !== base(block.rope_theta, `${where}.rope_theta`)) {
        throw valueError(`the config states different bases: ${where}.rope_theta = ${repr(block.rope_theta)}, ` +
          `${name} = ${repr(value)} (transformers 5 keeps the first and drops ${name})`);
      }
      continue;
    }
    const dflt = thetaDefault(family, key);
    if (base(value, name) !== dflt) {
      cfg.defaults.push(`${name} = ${repr(value)} is ignored: ${family.label}'s config class drops that keyword and ` +
        `keeps its default base ${repr(dflt)}, which its code then uses`);
    }
  }
}

function ropeFor(reg, family, cfg, key, nested) {
  const common = { rename: family.rename, allowed: family.scalings, topLevelOriginal: family.top_level_original };
  const source = `${family.label} config default_theta`;
  const keptKeys = () => family.theta_keys.filter((k) => !family.ignored_theta.includes(k));
  if (nested.length) {
    const where = `rope_parameters[${repr(key)}]`;
    let block = cfg.get("rope_parameters")[key];
    if (!isMapping(block)) throw typeError(`${where} must be a dict, got ${repr(block)}`);
    block = renameType({ ...block });
    let keys = keptKeys();
    if (family.local_theta && key === family.local_theta[1]) keys = [family.local_theta[0]];
    else if (family.flat_types && !family.flat_types.includes(key)) keys = [];
    droppedTheta(family, cfg, block, where, key);
    return readRope(reg, cfg, { thetaKeys: keys, block, where, defaultTheta: thetaDefault(family, key), thetaSource: source, nested: true, ...common });
  }
  if (family.local_theta && key === family.local_theta[1]) {
    return readRope(reg, cfg, { thetaKeys: [family.local_theta[0]], block: { rope_type: "default" }, where: `(${key} layers)`,
      defaultTheta: thetaDefault(family, key), thetaSource: source, ...common });
  }
  if (family.flat_types && given(key) && !family.flat_types.includes(key)) {
    const b = thetaDefault(family, key);
    const stated = family.theta_keys.filter((k) => cfg.has(k));
    const note = stated.length && cfg.get(stated[0]) !== b ? ` (it ignores ${stated[0]} = ${repr(cfg.get(stated[0]))} for them)` : "";
    cfg.defaults.push(`${key} layers: rope_theta = ${repr(b)}, no scaling (${family.label} config class; a flat ` +
      `rope_theta/rope_scaling reaches ${family.flat_types.join(", ")} layers only)${note}`);
    return { base: b, method: "default", params: {}, where: `(${key} layers)`, block: { rope_type: "default", rope_theta: b } };
  }
  let [block, where] = ropeBlock(cfg);
  droppedTheta(family, cfg, block, where, key);
  if (family.flat_types && given(key)) {
    return readRope(reg, cfg, { thetaKeys: keptKeys(), block, where, defaultTheta: thetaDefault(family, key), thetaSource: source, nested: true, ...common });
  }
  if (family.default_block && (!Object.keys(block).length || Object.keys(block).every((k) => k === "rope_theta"))) {
    cfg.defaults.push(`rope_parameters = ${repr(family.default_block)} (${family.label} config default; the config does not state it)`);
    block = { ...family.default_block, ...block };
  }
  return readRope(reg, cfg, { thetaKeys: keptKeys(), block, where, defaultTheta: thetaDefault(family, key), thetaSource: source, ...common });
}

function headSize(family, cfg) {
  if (family.head === "split") return splitHeads(cfg);
  if (family.head !== "head_dim") return cfg.size(family.head);
  if (given(family.head_default) && !Object.prototype.hasOwnProperty.call(cfg.data, "head_dim")) {
    // the config class's default, not hidden_size // num_attention_heads (Gemma 3 4B: 256, not 320)
    return positiveInt(cfg.default("head_dim", family.head_default, `${family.label} config class default`), "head_dim");
  }
  return headDim(cfg);
}

function typeHead(family, cfg, chosen) {
  if (!family.type_head || given(cfg.get("per_layer_config"))) return cfg;
  const types = [...new Set(chosen.map(([, t]) => t))];
  const hit = types.filter((t) => Object.prototype.hasOwnProperty.call(family.type_head, t));
  if (!hit.length) return cfg;
  if (types.length > 1) {
    throw valueError(`the selected layers of this ${repr(cfg.modelType)} config have different head sizes ` +
      `(${types.map((t) => (t === null ? "None" : t)).sort().join(", ")}); pass layer=index or layer_type=...`);
  }
  const [name, dflt] = family.type_head[hit[0]];
  const value = positiveInt(cfg.default(name, dflt, `${family.label} config class default`), name);
  const out = new Config({ ...cfg.data, head_dim: value }, cfg.modelType);
  out.defaults = cfg.defaults;
  return out;
}

function rotaryPart(family, cfg, rope) {
  if (family.rotary === "mla") {
    const ropeDim = cfg.size("qk_rope_head_dim"), nopeDim = cfg.size("qk_nope_head_dim");
    return { head_dim: nopeDim + ropeDim, rotary_dim: ropeDim, rotary_offset: nopeDim };
  }
  const dim = headSize(family, cfg);
  if (family.rotary === "head") {
    noPartial(cfg, rope);
    return { head_dim: dim, rotary_dim: dim };
  }
  if (family.rotary === "rotary_dim") {
    const r = positiveInt(cfg.require("rotary_dim"), "rotary_dim");
    if (r % 2 || r > dim) throw valueError(`rotary_dim must be an even number of dims <= head_dim = ${dim}, got ${r}`);
    return { head_dim: dim, rotary_dim: r };
  }
  let [frac, label] = fraction(cfg, rope, family.fraction_keys, family.default_fraction, `${family.label} config default`);
  if (family.rotary_dim_key && cfg.has(family.rotary_dim_key)) {
    const legacy = positiveInt(cfg.get(family.rotary_dim_key), family.rotary_dim_key);
    const stated = Object.prototype.hasOwnProperty.call(cfg.data, label) || label.startsWith(rope.where);
    if (stated && Math.trunc(dim * frac) !== legacy) {
      throw valueError(`the config states ${family.rotary_dim_key} = ${legacy} and ${label} = ${frac} ` +
        `(= ${Math.trunc(dim * frac)} of head_dim ${dim} dims); they must agree`);
    }
    const kept = cfg.defaults.filter((d) => !d.startsWith(`${label} = `));
    cfg.defaults.splice(0, cfg.defaults.length, ...kept);
    [frac, label] = [legacy / dim, family.rotary_dim_key];
  }
  if (rope.method === "proportional") {
    const pairs = Math.floor(frac * dim / 2);
    if (pairs <= 0) throw valueError(`${label} = ${frac} leaves no rotating pair in a head of ${dim}`);
    return { head_dim: dim, rotary_dim: dim, rotating_pairs: pairs };
  }
  const r = rotated(dim, frac, label);
  return { head_dim: dim, rotary_dim: r, rotary_offset: family.rotary_at === "end" ? dim - r : 0 };
}

function nopeParts(reg, family, cfg, nested, layerType) {
  let key;
  if (nested.length) {
    if (family.rope_keys) layerType = own(family.rope_keys, layerType) ?? own(family.rope_keys, "*") ?? null;
    key = given(own(cfg.get("rope_parameters"), layerType)) ? layerType : null;
  } else {
    key = family.local_theta || family.flat_types ? layerType : null;
  }
  if (!nested.length || key !== null) {
    const rope = ropeFor(reg, family, cfg, key, nested);
    return [rope, rotaryPart(family, cfg, rope)];
  }
  const rope = { base: thetaDefault(family, layerType), method: "default", params: {}, where: "(no RoPE)", block: {} };
  if (family.rotary === "mla") {
    const nopeDim = cfg.size("qk_nope_head_dim"), ropeDim = cfg.size("qk_rope_head_dim");
    return [rope, { head_dim: nopeDim + ropeDim, rotary_dim: ropeDim, rotary_offset: nopeDim }];
  }
  const dim = headSize(family, cfg);
  return [rope, { head_dim: dim, rotary_dim: dim }];
}

function overlay(cfg, layers) {
  const table = cfg.get("per_layer_config");
  if (!truthy(table) || (layers.length === 1 && layers[0] === null)) return cfg;
  if (!isMapping(table)) throw typeError(`per_layer_config must be a dict of per-layer overrides, got ${repr(table)}`);
  const found = layers.filter((i) => i !== null).map((i) => ({ ...(own(table, String(i)) || {}) }));
  if (found.some((f) => !equal(f, found[0]))) throw valueError("per_layer_config gives the selected layers different settings; pass layer=index");
  if (!Object.keys(found[0]).length) return cfg;
  const out = new Config({ ...cfg.data, ...found[0] }, cfg.modelType);
  out.defaults = cfg.defaults;
  return out;
}

function readFamily(reg, family, cfg, layerType, layer) {
  let types = layerTypesOf(family, cfg, given(layer));
  let known = [];
  if (family.pattern || family.local_theta || family.flat_types || family.rope_types) known = [...(family.rope_types || []), ...reg.local_global];
  if (family.nope_layers) known = [...known, ...family.nope_layers.slice(1)];
  [layerType, layer] = selectLayer(cfg, layerType, layer, types, known);
  const nested = nestedKeys(reg, family, cfg.get("rope_parameters"), types);
  if (family.nested_only && !nested.length) {
    throw valueError(`the ${repr(cfg.modelType)} config has no rope_parameters nested by layer type; ${family.label}'s config ` +
      "class fills in per-layer-type defaults (base, scaling, rotated fraction) that rope_spec does not guess: " +
      "pass the config object or its to_dict()");
  }
  const flags = family.nope_layers ? ropeFlags(cfg, `${family.label} config default`, family.nope_layers[0]) : null;
  const perType = nested.length > 0 || !!family.local_theta || !!family.flat_types;
  if (!types && layer === null && (family.nope_list || family.nope_indices) && cfg.has("num_hidden_layers")) {
    types = Array(cfg.size("num_hidden_layers")).fill(null);
  }
  let chosen;
  if (layer !== null) chosen = [[layer, layerType]];
  else if (types) chosen = types.map((t, i) => [i, t]).filter(([, t]) => layerType === null || t === layerType);
  else chosen = [[null, layerType]];
  const kinds = new Map();
  for (const [i, t] of chosen) {
    if ((perType || family.rope_types) && t === null) {
      throw valueError(`layer_type is required for ${family.label}: its layer types use different RoPE settings and this ` +
        `config lists no layer_types; pass layer_type=... (${(nested.length ? nested : reg.local_global).map(repr).join(", ")}) ` +
        "or layer=index");
    }
    const kind = layerKind(reg, family, cfg, types, nested, flags, i, t);
    const id = JSON.stringify(kind);
    if (!kinds.has(id)) kinds.set(id, [kind, []]);
    kinds.get(id)[1].push(i);
  }
  if (kinds.size > 1) {
    const where = [...kinds.values()].map(([[uses, key], idx]) =>
      `layers ${idx.length < 9 ? listRepr(idx) : listRepr(idx.slice(0, 8)).slice(0, -1) + ", ...]"}: ` +
      (uses && key ? `RoPE (${key})` : uses ? "RoPE" : "no RoPE")).join("; ");
    throw valueError(`layers of this ${repr(cfg.modelType)} config differ (${where}); pass layer=index ` +
      (types ? "or layer_type=..." : "") + " to choose one (layer_type is required when the layer types differ)");
  }
  const [[usesRope, key, why]] = [...kinds.values()][0];
  cfg = overlay(typeHead(family, cfg, chosen), chosen.map(([i]) => i));
  let rope, parts;
  if (usesRope) {
    rope = ropeFor(reg, family, cfg, key, nested);
    parts = rotaryPart(family, cfg, rope);
  } else {
    [rope, parts] = nopeParts(reg, family, cfg, nested, layerType);
    parts.no_rope_reason = why;
  }
  let layout = family.layout, output = family.output_layout;
  if (family.interleave) {
    const [name, dflt] = family.interleave;
    const flag = cfg.default(name, dflt, `${family.label} config default`);
    [layout, output] = truthy(flag) ? ["interleaved", "half"] : ["half", "half"];
  }
  Object.assign(parts, { layout, output_layout: output || layout, rope, qk_norm: family.qk_norm, layer_type: layerType, layer, uses_rope: usesRope });
  if (family.mrope && usesRope) {
    const [assignment, defaultSection] = family.mrope;
    let section = own(rope.block, "mrope_section");
    if (!given(section)) {
      section = defaultSection;
      cfg.defaults.push(`${rope.where}.mrope_section = ${listRepr(defaultSection)} (the family's rotary ` +
        "embedding default; the config does not state it)");
    }
    if (mropeAxes(section, assignment) !== Math.floor(parts.rotary_dim / 2)) {
      throw valueError(`${rope.where}.mrope_section ${repr(section)} must add up to rotary_dim // 2 = ${Math.floor(parts.rotary_dim / 2)}`);
    }
    Object.assign(parts, { mrope_section: [...section], mrope_assignment: assignment });
  }
  if (family.clockwise) parts.clockwise = true;
  if (family.layer_notes && given(own(family.layer_notes, layerType))) parts.note = family.layer_notes[layerType];
  if (family.extra) Object.assign(parts, call(family.extra.callable, cfg, parts));
  return [parts, cfg];
}

/** The number of pairs an M-RoPE section covers, after the checks of rope_edu.multidim.mrope_axes. */
function mropeAxes(section, assignment) {
  if (!Array.isArray(section)) throw typeError(`mrope_section must be a sequence of 3 non-negative integers (pairs for time, height, width), got ${repr(section)}`);
  if (section.length !== 3) throw valueError(`mrope_section must have 3 entries (pairs for time, height, width), got ${section.length}: ${repr(section)}`);
  section.forEach((s, i) => checkInt(s, `mrope_section[${i}]`, 0));
  const n = section[0] + section[1] + section[2];
  if (n === 0) throw valueError("mrope_section must give at least one pair to some axis, got all zeros");
  if (assignment === "interleaved") {
    for (const axis of [1, 2]) {
      const last = 3 * section[axis] - 3 + axis;
      if (section[axis] && last >= n) {
        throw valueError(`mrope_section ${repr(section)} cannot be interleaved: axis ${axis} needs pairs up to ${last} but there are only ${n}`);
      }
    }
  }
  return n;
}

// --- what some attention layers add, and the families with readers of their own -----------------

function _llama4_extra(cfg, parts) {
  const qk = truthy(cfg.default("use_qk_norm", true, "Llama4TextConfig default"));
  const out = { qk_norm: qk && parts.uses_rope ? "after_rope" : "none" };
  if (!parts.uses_rope && truthy(cfg.default("attn_temperature_tuning", true, "Llama4TextConfig default"))) {
    out.temperature_tuning = [cfg.default("floor_scale", 8192, "Llama4TextConfig default"),
      cfg.default("attn_scale", 0.1, "Llama4TextConfig default")];
  }
  return out;
}

function _mla_softmax_extra(cfg, parts) {
  const rope = parts.rope;
  const allDim = own(rope.block, "mscale_all_dim");
  if (!parts.uses_rope || rope.method === "default" || !truthy(allDim)) return {};
  const factor = param(rope.block, "factor", rope.where);
  const m = factor <= 1 ? 1 : 0.1 * allDim * Math.log(factor) + 1;
  return { softmax_scale_factor: m * m };
}

function _query_scale_extra(cfg, parts) {
  const rope = parts.rope;
  if (!parts.uses_rope) return {};
  const beta = own(rope.block, "llama_4_scaling_beta");
  if (!given(beta)) {
    throw valueError(`${rope.where} has no llama_4_scaling_beta, which ${repr(cfg.modelType)} attention multiplies ` +
      "into its query scale (transformers fails without it)");
  }
  let length = own(rope.block, "original_max_position_embeddings");
  if (!given(length)) length = cfg.require("original_max_position_embeddings", " (the query scale's length)");
  return { query_scale: [positiveInt(length, "original_max_position_embeddings"), beta] };
}

function _mla_query_scale_extra(cfg, parts) {
  return { ..._mla_softmax_extra(cfg, parts), ..._query_scale_extra(cfg, parts) };
}

function _read_gptj(reg, cfg, layerType, layer) {
  [layerType, layer] = selectLayer(cfg, layerType, layer, null);
  for (const name of ["rope_theta", "rope_scaling", "rope_parameters"]) {
    if (cfg.has(name)) throw valueError(`${name} is set, but GPT-J's code has no such field: its base is fixed at 10000 and it has no scaling`);
  }
  const hidden = cfg.has("n_embd") ? "n_embd" : "hidden_size";
  const heads = cfg.has("n_head") ? "n_head" : "num_attention_heads";
  const dim = splitHeads(cfg, hidden, heads);
  if (Object.prototype.hasOwnProperty.call(cfg.data, "rotary_dim") && cfg.data.rotary_dim === null) {
    throw valueError("rotary_dim is None: GPT-J's code then builds its table over the whole hidden size " +
      "(n_embd), which only fits a single head; give rotary_dim");
  }
  const r = positiveInt(cfg.default("rotary_dim", 64, "GPTJConfig default"), "rotary_dim");
  if (r % 2 || r > dim) throw valueError(`rotary_dim must be an even number of dims <= head_dim = ${dim}, got ${r}`);
  // Python's dict.get("n_positions", default): a stated null is kept (and then defaulted below)
  let positions = Object.prototype.hasOwnProperty.call(cfg.data, "n_positions") ? cfg.data.n_positions : cfg.get("max_position_embeddings");
  if (!given(positions)) positions = cfg.default("n_positions", 2048, "GPTJConfig default");
  const rope = { base: 10000, method: "default", params: {}, where: "(fixed in GPT-J's code)", block: {} };
  return { head_dim: dim, rotary_dim: r, layout: "interleaved", rope, max_positions: positiveInt(positions, "n_positions"),
    layer_type: layerType, layer };
}

function _read_minimind(reg, cfg, layerType, layer) {
  if (given(layerType) || given(layer)) selectLayer(cfg, layerType, layer, null);
  for (const old of ["dim", "n_heads"]) {
    if (cfg.has(old) && !cfg.has("hidden_size")) {
      throw valueError(`field ${repr(old)}: this looks like the older MiniMind LMConfig (dim, n_heads), whose code rotates ` +
        "interleaved pairs with a fixed base; rope_spec reads the MiniMindConfig of model_minimind.py " +
        "(hidden_size, num_attention_heads, rope_theta)");
    }
  }
  const dim = headDim(cfg);
  const b = base(cfg.require("rope_theta", " (MiniMind is not in transformers: no documented default)"), "rope_theta");
  const scaling = cfg.get("rope_scaling");
  if (!given(scaling) && truthy(cfg.get("inference_rope_scaling"))) throw valueError("inference_rope_scaling is true but the config has no rope_scaling dict");
  const rope = !given(scaling) ? { base: b, method: "default", params: {}, where: "rope_scaling", block: {} }
    : minimindYarn(cfg, { ...scaling }, b, dim);
  return { head_dim: dim, rotary_dim: dim, layout: "half", rope, qk_norm: "before_rope" };
}

function minimindYarn(cfg, block, b, dim) {
  const where = "rope_scaling";
  const kind = Object.prototype.hasOwnProperty.call(block, "type") ? block.type : own(block, "rope_type") ?? null;
  if (kind !== "yarn") throw valueError(`unknown rope_scaling.type ${repr(kind)} for MiniMind; its code implements only 'yarn'`);
  const params = {};
  for (const name of ["factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor"]) params[name] = param(block, name, where);
  if (cfg.size("max_position_embeddings") <= positiveInt(params.original_max_position_embeddings, "rope_scaling.original_max_position_embeddings")) {
    return { base: b, method: "default", params: {}, where, block };
  }
  const end = Math.ceil(dim * Math.log(params.original_max_position_embeddings / (params.beta_slow * 2 * Math.PI)) / (2 * Math.log(b)));
  if (!(end >= 0 && end <= Math.floor(dim / 2) - 1)) {
    throw valueError(`rope_scaling.beta_slow = ${params.beta_slow}: MiniMind's YaRN ramp would end at pair ${end}, outside ` +
      `[0, ${Math.floor(dim / 2) - 1}], where its clipping differs from transformers'; not supported`);
  }
  params.truncate = true;
  return { base: b, method: "yarn", params, where, block };
}

/** Every callable the registry may name, by its Python name. */
export const CALLABLES = {
  _default_params, _linear_params, _dynamic_params, _yarn_params, _llama3_params, _longrope_params, _proportional_params,
  _llama4_extra, _mla_softmax_extra, _query_scale_extra, _mla_query_scale_extra, _read_gptj, _read_minimind,
};

function call(name, ...args) {
  const fn = CALLABLES[name];
  if (!fn) throw new Error(`the registry names a callable ${name} that this interpreter does not implement`);
  return fn(...args);
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
  let cfg = new Config(data, modelType);
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
  const extra = rope.method === "dynamic" ? { seq_len: rope.params.original_max_position_embeddings } : {};
  const [, attentionFactor] = frequencies(reg, rope.method, r, rope.base, { ...rope.params, ...extra }, parts.rotating_pairs);
  return makeSpec(reg, {
    family: family.key, model_type: modelType, head_dim: dim, rotary_dim: r, rotary_offset: parts.rotary_offset,
    layout: parts.layout, output_layout: parts.output_layout, base: rope.base, scaling: rope.method, scaling_params: { ...rope.params },
    attention_factor: attentionFactor, softmax_scale_factor: parts.softmax_scale_factor ?? 1, uses_rope: parts.uses_rope ?? true,
    qk_norm: parts.qk_norm ?? "none", layer_type: parts.layer_type ?? null, layer: parts.layer ?? null,
    temperature_tuning: parts.temperature_tuning ?? null, max_positions: parts.max_positions ?? null, defaults: [...cfg.defaults],
    mrope_section: parts.mrope_section ?? null, mrope_assignment: parts.mrope_assignment ?? null,
    rotating_pairs: parts.rotating_pairs ?? null, no_rope_reason: parts.no_rope_reason ?? "", clockwise: parts.clockwise ?? false,
    query_scale: parts.query_scale ?? null, note: parts.note ?? "",
  });
}

function makeSpec(reg, fields) {
  const spec = { ...fields };
  const method = reg.methods[spec.scaling];
  spec.depends_on_length = !!method && [...method.required, ...Object.keys(method.optional)].includes("seq_len");
  /** Frequencies of the rotary_dim / 2 pairs (RopeSpec.inv_freq). */
  spec.inv_freq = (seqLen = null) => {
    if (!spec.uses_rope) throw valueError(`this layer uses no RoPE (uses_rope is False: a NoPE layer of ${repr(spec.family)}); it has no frequencies`);
    const params = { ...spec.scaling_params };
    if (spec.depends_on_length) {
      if (seqLen !== null) checkInt(seqLen, "seq_len", 1);
      else if (spec.scaling === "dynamic") seqLen = params.original_max_position_embeddings;
      params.seq_len = seqLen;
    }
    return frequencies(reg, spec.scaling, spec.rotary_dim, spec.base, params, spec.rotating_pairs)[0];
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
    const params = Object.entries(s.scaling_params).map(([k, v]) => `${k}=${short(v)}`).join(", ");
    lines.push(`  base ${grouped(s.base)}; scaling ${repr(s.scaling)}` + (params ? `: ${params}` : ""));
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
  try {
    const [data, modelType] = unwrap(reg, config);
    const key = typeof modelType === "string" ? own(reg.model_types, modelType) : undefined;
    return { data, modelType: modelType ?? null, family: key ? reg.families[key] : null };
  } catch {
    return { data: isMapping(config) ? config : null, modelType: null, family: null };
  }
}
