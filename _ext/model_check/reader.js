// The standard reader of a family's row: rope_edu/models/reader.py in JavaScript (the same functions,
// camelCased; the functions a registry row names keep their Python names and are in CALLABLES).

import { valueError, typeError, own, given, isMapping, truthy, repr, equal, listRepr, positiveInt, checkInt } from "./python.js";
import {
  PARAMS, base, fraction, headDim, noPartial, param, readRope, renameType, ropeBlock, rotated, splitHeads,
} from "./config.js";
import { knownTypes, layerTypes, noRopeReason, perLayer, ruleState, selectLayer, typeNames, wholeModelReason } from "./layers.js";
import { FREQUENCIES } from "./scaling.js";

function thetaDefault(family, layerType) {
  const d = family.default_theta;
  if (isMapping(d)) return Object.prototype.hasOwnProperty.call(d, layerType) ? d[layerType] : d["*"];
  return d;
}

function nestedKeys(reg, family, block, types) {
  if (!isMapping(block)) return [];
  const labels = new Set([...(types || []), ...reg.local_global, ...(family.rotating_layer_types || []),
    ...Object.values(family.rope_keys || {}), ...typeNames(family)]);
  return Object.keys(block).filter((k) => labels.has(k) && (block[k] === null || isMapping(block[k])));
}

// The key of a layer outside a family's scaling_layers (reader.py: _UNSCALED).
const UNSCALED = "unscaled";

function layerKind(reg, family, cfg, nested, state, index, layerType) {
  const whole = wholeModelReason(family, cfg);
  if (whole !== null) return [false, null, whole];
  if (reg.not_attention.includes(layerType)) return [false, null, `a ${repr(layerType)} layer has no attention, so no RoPE`];
  const why = noRopeReason(family, cfg, state, index, layerType);
  if (why !== null) return [false, null, why];
  if (given(family.scaling_layers) && given(index) && !nested.length) {
    const listed = cfg.get(family.scaling_layers);
    if (given(listed) && !(Array.isArray(listed) && listed.includes(index))) return [true, UNSCALED, ""];
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
      cfg.record(name, value, `is ignored: ${family.label}'s config class drops that keyword and ` +
        `keeps its default base ${repr(dflt)}, which its code then uses`, { kind: "unread" });
    }
  }
}

function ropeFor(reg, family, cfg, key, nested) {
  const common = { rename: family.rename, allowed: family.allowed_rope_types, topLevelOriginal: family.top_level_original,
    retype: family.retype, note: family.allowed_rope_types_note };
  const source = `${family.label} config default_theta`;
  const keptKeys = () => family.theta_keys.filter((k) => !family.ignored_theta.includes(k));
  if (key === UNSCALED) {
    // a layer the family's scaling_layers leaves out: the same base, no scaling (see reader.py)
    const rope = ropeFor(reg, family, cfg, null, nested);
    return { base: rope.base, rope_type: "default", params: {}, where: `(not in ${family.scaling_layers})`,
      block: { ...rope.block, rope_type: "default" } };
  }
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
    cfg.record(`${key} layers: rope_theta`, b, `(${family.label} config class; a flat ` +
      `rope_theta/rope_scaling reaches ${family.flat_types.join(", ")} layers only)${note}`, { kind: "fixed" });
    return { base: b, rope_type: "default", params: {}, where: `(${key} layers)`, block: { rope_type: "default", rope_theta: b } };
  }
  let [block, where] = ropeBlock(cfg, family.ignored_scaling, family.label);
  droppedTheta(family, cfg, block, where, key);
  if (family.flat_types && given(key)) {
    return readRope(reg, cfg, { thetaKeys: keptKeys(), block, where, defaultTheta: thetaDefault(family, key), thetaSource: source, nested: true, ...common });
  }
  if (family.default_block && (!Object.keys(block).length || Object.keys(block).every((k) => k === "rope_theta"))) {
    cfg.record("rope_parameters", family.default_block, `${family.label} config default`);
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
  const out = cfg.derive({ ...cfg.data, head_dim: value });
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
    cfg.forget(label);
    [frac, label] = [legacy / dim, family.rotary_dim_key];
  }
  if (rope.rope_type === "proportional") {
    const pairs = Math.floor(frac * dim / 2);
    if (pairs <= 0) throw valueError(`${label} = ${frac} leaves no rotating pair in a head of ${dim}`);
    return { head_dim: dim, rotary_dim: dim, rotating_pairs: pairs };
  }
  const r = rotated(dim, frac, label);
  return { head_dim: dim, rotary_dim: r, rotary_offset: family.rotary_at === "end" ? dim - r : 0 };
}

function nopeParts(reg, family, cfg, nested, layerType) {
  const whole = wholeModelReason(family, cfg) !== null;
  let key;
  if (whole) {
    key = null;
  } else if (nested.length) {
    if (family.rope_keys) layerType = own(family.rope_keys, layerType) ?? own(family.rope_keys, "*") ?? null;
    key = given(own(cfg.get("rope_parameters"), layerType)) ? layerType : null;
  } else {
    key = family.local_theta || family.flat_types ? layerType : null;
  }
  if (!whole && (!nested.length || key !== null)) {
    const rope = ropeFor(reg, family, cfg, key, nested);
    return [rope, rotaryPart(family, cfg, rope)];
  }
  const rope = { base: thetaDefault(family, layerType), rope_type: "default", params: {}, where: "(no RoPE)", block: {} };
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
  const out = cfg.derive({ ...cfg.data, ...found[0] });
  return out;
}

export function readFamily(reg, family, cfg, layerType, layer) {
  let types = layerTypes(family, cfg, given(layer));
  [layerType, layer] = selectLayer(cfg, layerType, layer, types, knownTypes(reg, family));
  const nested = nestedKeys(reg, family, cfg.get("rope_parameters"), types);
  if (family.nested_only && !nested.length) {
    throw valueError(`the ${repr(cfg.modelType)} config has no rope_parameters nested by layer type; ${family.label}'s config ` +
      "class fills in per-layer-type defaults (base, scaling, rotated fraction) that rope_spec does not guess: " +
      "pass the config object or its to_dict()");
  }
  const state = ruleState(family, cfg);
  const perType = nested.length > 0 || !!family.local_theta || !!family.flat_types;
  if (!types && layer === null && (perLayer(family) || given(family.scaling_layers)) && cfg.has("num_hidden_layers")) {
    types = Array(cfg.size("num_hidden_layers")).fill(null);
  }
  let chosen;
  if (layer !== null) chosen = [[layer, layerType]];
  else if (types) chosen = types.map((t, i) => [i, t]).filter(([, t]) => layerType === null || t === layerType);
  else chosen = [[null, layerType]];
  const kinds = new Map();
  for (const [i, t] of chosen) {
    if ((perType || family.rotating_layer_types) && t === null) {
      throw valueError(`layer_type is required for ${family.label}: its layer types use different RoPE settings and this ` +
        `config lists no layer_types; pass layer_type=... (${(nested.length ? nested : reg.local_global).map(repr).join(", ")}) ` +
        "or layer=index");
    }
    const kind = layerKind(reg, family, cfg, nested, state, i, t);
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
      cfg.record(`${rope.where}.mrope_section`, defaultSection, "the family's rotary embedding default");
    }
    const pairs = Math.floor(parts.rotary_dim / 2);
    mropeAxes(section, "contiguous");  // a section's checks: 3 non-negative integers, not all zero
    if (assignment === "interleaved" && section[0] + section[1] + section[2] !== pairs) {
      const stated = section;
      section = interleavedSection(stated, pairs);
      cfg.record(`${rope.where}.mrope_section`, stated, `does not add up to rotary_dim // 2 = ${pairs}: ` +
        `as the family's code does, height takes pairs 1, 4, 7, ... below ${3 * stated[1]}, width 2, 5, 8, ... ` +
        `below ${3 * stated[2]}, time every other pair, which is the section ${listRepr(section)}`, { kind: "unread" });
    }
    if (mropeAxes(section, assignment) !== pairs) {
      throw valueError(`${rope.where}.mrope_section ${repr(section)} must add up to rotary_dim // 2 = ${pairs} ` +
        "(the family's code splits the pairs by it)");
    }
    Object.assign(parts, { mrope_section: [...section], mrope_assignment: assignment });
  }
  if (family.clockwise) parts.clockwise = true;
  if (family.layer_notes && given(own(family.layer_notes, layerType))) parts.note = family.layer_notes[layerType];
  if (family.extra) Object.assign(parts, call(family.extra.callable, cfg, parts));
  return [parts, cfg];
}

/** rope_edu.models.reader._interleaved_section: the section an interleaved M-RoPE family's code uses over
 * `pairs` pairs when the stated one does not add up to them. */
function interleavedSection(section, pairs) {
  const count = (start, stop) => (stop > start ? Math.floor((stop - start - 1) / 3) + 1 : 0);
  const height = count(1, Math.min(3 * section[1], pairs));
  const width = count(2, Math.min(3 * section[2], pairs));
  return [pairs - height - width, height, width];
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

function llama4_extra(cfg, parts) {
  const qk = truthy(cfg.classDefault("use_qk_norm"));
  const out = { qk_norm: qk && parts.uses_rope ? "after_rope" : "none" };
  if (!parts.uses_rope && truthy(cfg.classDefault("attn_temperature_tuning"))) {
    out.temperature_tuning = [cfg.classDefault("floor_scale"), cfg.classDefault("attn_scale")];
  }
  return out;
}

/** rope_edu.models.reader.BEAM_QUERY_POWER: constants of Beam's modeling code, not config fields. */
const BEAM_QUERY_POWER = [2048.0, 0.1];

function beam_extra(cfg, parts) {
  return parts.uses_rope ? {} : { query_power: [...BEAM_QUERY_POWER] };
}

function mla_softmax_extra(cfg, parts) {
  const rope = parts.rope;
  const allDim = own(rope.block, "mscale_all_dim");
  if (!parts.uses_rope || rope.rope_type === "default" || !truthy(allDim)) return {};
  const factor = param(rope.block, "factor", rope.where);
  const m = factor <= 1 ? 1 : 0.1 * allDim * Math.log(factor) + 1;
  return { softmax_scale_factor: m * m };
}

function query_scale_extra(cfg, parts) {
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

function mla_query_scale_extra(cfg, parts) {
  return { ...mla_softmax_extra(cfg, parts), ...query_scale_extra(cfg, parts) };
}

function read_gptj(reg, cfg, layerType, layer) {
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
  const r = positiveInt(cfg.classDefault("rotary_dim"), "rotary_dim");
  if (r % 2 || r > dim) throw valueError(`rotary_dim must be an even number of dims <= head_dim = ${dim}, got ${r}`);
  // Python's dict.get("n_positions", default): a stated null is kept (and then defaulted below)
  let positions = Object.prototype.hasOwnProperty.call(cfg.data, "n_positions") ? cfg.data.n_positions : cfg.get("max_position_embeddings");
  if (!given(positions)) positions = cfg.classDefault("n_positions");
  const rope = { base: 10000, rope_type: "default", params: {}, where: "(fixed in GPT-J's code)", block: {} };
  return { head_dim: dim, rotary_dim: r, layout: "interleaved", rope, max_positions: positiveInt(positions, "n_positions"),
    layer_type: layerType, layer };
}

function read_minimind(reg, cfg, layerType, layer) {
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
  const rope = !given(scaling) ? { base: b, rope_type: "default", params: {}, where: "rope_scaling", block: {} }
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
    return { base: b, rope_type: "default", params: {}, where, block };
  }
  const end = Math.ceil(dim * Math.log(params.original_max_position_embeddings / (params.beta_slow * 2 * Math.PI)) / (2 * Math.log(b)));
  if (!(end >= 0 && end <= Math.floor(dim / 2) - 1)) {
    throw valueError(`rope_scaling.beta_slow = ${params.beta_slow}: MiniMind's YaRN ramp would end at pair ${end}, outside ` +
      `[0, ${Math.floor(dim / 2) - 1}], where its clipping differs from transformers'; not supported`);
  }
  params.truncate = true;
  return { base: b, rope_type: "yarn", params, where, block };
}

/** Every callable the registry may name, by its Python name (rope_edu.models.mirrored.CALLABLES, the same list). */
export const CALLABLES = {
  ...PARAMS, ...FREQUENCIES, beam_extra, llama4_extra, mla_softmax_extra, query_scale_extra, mla_query_scale_extra, read_gptj, read_minimind,
};

export function call(name, ...args) {
  const fn = CALLABLES[name];
  if (!fn) throw new Error(`the registry names a callable ${name} that this interpreter does not implement`);
  return fn(...args);
}
