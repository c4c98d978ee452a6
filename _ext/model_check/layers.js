// Which layers rotate: rope_edu/models/layers.py in JavaScript. A family's `layers` is null or one tagged
// value [tag, ...arguments]; LAYER_RULES has one entry per tag, with the same hooks as the Python table.

import { valueError, typeError, given, isInteger, truthy, repr, equal, positiveInt, checkInt, checkChoice } from "./python.js";


export function checkTypes(types, name = "layer_types") {
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

export function selectLayer(cfg, layerType, layer, types, known = []) {
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

// --- the rules ---------------------------------------------------------------------------------------

const source = (family) => `${family.label} config default`;

function patternTypes(family, cfg, needed, name, dflt, rest = "sliding_attention") {
  if (!(needed || cfg.has("num_hidden_layers"))) return null;
  const every = positiveInt(cfg.default(name, dflt, source(family)), name);
  return Array.from({ length: cfg.size("num_hidden_layers") }, (_, i) => ((i + 1) % every ? rest : "full_attention"));
}

function cycleTypes(family, cfg, needed, name) {
  if (!(cfg.has(name) && cfg.has("num_hidden_layers"))) return null;
  const cycle = checkTypes(cfg.get(name), name);
  return Array.from({ length: cfg.size("num_hidden_layers") }, (_, i) => cycle[i % cycle.length]);
}

function flagTypes(family, cfg, needed, interval, rope, nope) {
  if (!(needed || cfg.has("num_hidden_layers") || cfg.has("no_rope_layers"))) return null;
  return ropeFlags(cfg, source(family), interval).map((f) => (f ? rope : nope));
}

function flagReason(family, cfg, flags, index) {
  if (!given(index)) return null;
  if (index >= flags.length) throw valueError(`layer ${index} is beyond no_rope_layers (${flags.length} entries)`);
  return flags[index] ? null : "no_rope_layers marks this layer NoPE";
}

function attentionTypes(family, cfg, needed, name) {
  if (!cfg.has("num_hidden_layers")) return null;
  const listed = truthy(cfg.get(name)) ? cfg.get(name) : [];
  return Array.from({ length: cfg.size("num_hidden_layers") }, (_, i) => (listed.includes(i) ? "full_attention" : "mamba"));
}

const builtByClass = (family, cfg, name) => valueError(`the ${repr(cfg.modelType)} config has no ${name} (which layers use no RoPE); ` +
  `${family.label}'s config class builds one: pass the config object or its to_dict()`);

function listReason(family, cfg, state, index, layerType, name) {
  if (!given(index)) return null;
  const marks = cfg.get(name);
  if (!given(marks)) throw builtByClass(family, cfg, name);
  if (!Array.isArray(marks) || index >= marks.length) throw valueError(`${name} must list one entry per layer, got ${repr(marks)}`);
  return truthy(marks[index]) ? null : `${name}[${index}] = ${repr(marks[index])} marks a NoPE layer`;
}

function indicesReason(family, cfg, state, index, layerType, name) {
  if (!given(index)) return null;
  const listed = cfg.get(name);
  if (!given(listed)) throw builtByClass(family, cfg, name);
  return Array.isArray(listed) && listed.includes(index) ? `layer ${index} is in ${name} (no self-attention, no RoPE)` : null;
}

function switchReason(family, cfg, state, index, layerType, name, on, dflt) {
  const value = cfg.default(name, dflt, source(family));
  return equal(value, on) ? null : `${name} = ${repr(value)}: ${family.label} uses RoPE only when it is ${repr(on)}`;
}

function windowReason(family, cfg, state, index, layerType, mode) {
  return mode === "none" && !cfg.has("sliding_window")
    ? `${family.label} rotates only layers with a sliding window, and sliding_window is None` : null;
}

function forcedReason(family, cfg, state, index, layerType, name, value, builtFrom, gate, dflt, inner) {
  const listed = cfg.get(name);
  if (!given(listed) && cfg.has(builtFrom)) {
    throw valueError(`the ${repr(cfg.modelType)} config states ${builtFrom} but not ${name} (nor, perhaps, layer_types): ` +
      `${family.label}'s config class builds both from it; pass the config object or its to_dict()`);
  }
  if (given(index) && given(listed)) {
    if (!Array.isArray(listed) || index >= listed.length) throw valueError(`${name} must list one entry per layer, got ${repr(listed)}`);
    if (equal(listed[index], value) && equal(cfg.default(gate, dflt, source(family)), 1)) return "";  // forced: it rotates
  }
  return noRopeReason(family, cfg, state, index, layerType, inner);
}

function nopeReason(family, cfg, state, index, layerType, why, zero = null) {
  const value = given(zero) ? cfg.get(zero) : null;
  if (given(value) && (typeof value === "boolean" || value !== 0)) {
    throw valueError(`${zero} must be 0 for ${family.label}, got ${repr(value)}: its config class refuses a rotated ` +
      "part, and rope_spec does not read such a config as NoPE");
  }
  return why;
}

/** The layer rules by tag (rope_edu.models.layers.LAYER_RULES). */
export const LAYER_RULES = {
  pattern: { types: patternTypes, localGlobal: true },
  cycle: { types: cycleTypes },
  nope_flags: { types: flagTypes, state: (family, cfg, interval) => ropeFlags(cfg, source(family), interval), reason: flagReason,
    names: (n, rope, nope) => [rope, nope] },
  attention_indices: { types: attentionTypes },
  nope_list: { reason: listReason, perLayer: true },
  nope_indices: { reason: indicesReason, perLayer: true },
  switch: { reason: switchReason },
  no_window: { reason: windowReason, typed: (cfg) => cfg.has("sliding_window") },
  nope: { reason: nopeReason, whole: true },
  forced: { reason: forcedReason, typed: () => false },
};

function rule(layers) {
  if (!given(layers)) return [null, []];
  const [tag, ...args] = layers;
  if (!Object.prototype.hasOwnProperty.call(LAYER_RULES, tag)) {
    throw new Error(`the registry names a layer rule ${tag} that this interpreter does not implement`);
  }
  return [LAYER_RULES[tag], args];
}

function naming(family) {
  let [r, args] = rule(family.layers);
  while (args.length && Array.isArray(args[args.length - 1])) [r, args] = rule(args[args.length - 1]);
  return r === LAYER_RULES.no_window || r === LAYER_RULES.forced ? [null, []] : [r, args];
}

// --- what the reader asks ----------------------------------------------------------------------------

export function layerTypes(family, cfg, needed) {
  const types = cfg.get("layer_types");
  if (given(types)) return checkTypes(types);
  const [r, args] = naming(family);
  return r && r.types ? r.types(family, cfg, needed, ...args) : null;
}

export function typeNames(family) {
  const [r, args] = naming(family);
  return r && r.names ? r.names(...args) : [];
}

export function knownTypes(reg, family) {
  const [r] = naming(family);
  let known = [];
  if ((r && r.localGlobal) || family.local_theta || family.flat_types || family.rotating_layer_types) known = [...(family.rotating_layer_types || []), ...reg.local_global];
  return [...known, ...typeNames(family)];
}

export function perLayer(family) {
  const [r] = rule(family.layers);
  return !!(r && r.perLayer);
}

/** Why no layer of the family's text model rotates (a rule with `whole`), or null (layers.py: whole_model_reason). */
export function wholeModelReason(family, cfg) {
  const [r, args] = rule(family.layers);
  return r && r.whole && r.reason ? r.reason(family, cfg, null, null, null, ...args) : null;
}

export function ruleState(family, cfg) {
  const [r, args] = rule(family.layers);
  return r && r.state ? r.state(family, cfg, ...args) : null;
}

export function noRopeReason(family, cfg, state, index, layerType, layers = undefined) {
  const [r, args] = rule(layers === undefined ? family.layers : layers);
  if (r && r.reason) {
    const why = r.reason(family, cfg, state, index, layerType, ...args);
    if (why !== null) return why || null;  // "": the rule makes this layer rotate
  }
  const typed = r && r.typed ? r.typed(cfg, ...args) : true;
  if (family.rotating_layer_types && typed && given(layerType) && !family.rotating_layer_types.includes(layerType)) {
    return `${family.label} applies RoPE only in ${family.rotating_layer_types.map(repr).join(", ")} layers`;
  }
  return null;
}
