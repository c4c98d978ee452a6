// Frequencies and attention factors of RoPE's scaling types: rope_edu.scaling (METHODS, scaled_frequencies
// and the parameter checks of its _bind) and the frequency functions of rope_edu.models.rope_types (ROPE_TYPES: one
// per rope_type, FREQUENCIES here under the same names; proportional RoPE, Hunyuan's NTK-alpha, YaRN with equal
// betas), interpreted in JavaScript. Which parameters each method takes comes from the registry.

import { given, isInteger, isReal, positiveInt, checkChoice, repr, typeError, typeName, valueError } from "./python.js";

export function plainFrequencies(dim, b) {
  return Array.from({ length: dim / 2 }, (_, i) => b ** (-(2 * i) / dim));
}

function checkReal(value, name) {
  if (!isReal(value)) throw typeError(`${name} must be a finite real number, got ${repr(value)} of type ${typeName(value)}`);
  if (!Number.isFinite(value)) throw valueError(`${name} must be a finite real number, got ${value}`);
  return value;
}
function checkFactor(value, name) {
  value = checkReal(value, name);
  if (value < 1) throw valueError(`${name} must be >= 1 (the new context is factor times the original one), got ${value}`);
  return value;
}
function checkPositive(value, name) {
  value = checkReal(value, name);
  if (value <= 0) throw valueError(`${name} must be > 0, got ${value}`);
  return value;
}
function checkLength(value, name) {
  if (!isInteger(value)) throw typeError(`${name} must be a positive integer (a number of tokens), got ${repr(value)} of type ${typeName(value)}`);
  if (value <= 0) throw valueError(`${name} must be a positive integer (a number of tokens), got ${value}`);
  return value;
}
function checkFactorList(value, name) {
  if (!Array.isArray(value)) throw typeError(`${name} must be a sequence of positive real numbers (one per rotated pair), got ${repr(value)}`);
  if (!value.every(isReal)) throw typeError(`${name} must be a sequence of positive real numbers (one per rotated pair), got ${repr(value)}`);
  if (!value.length) throw valueError(`${name} must be a non-empty 1-d sequence (one factor per rotated pair), got shape (0,)`);
  if (!value.every((v) => Number.isFinite(v) && v > 0)) throw valueError(`${name} must contain finite positive numbers only`);
  return value;
}
const orNone = (check) => (value, name) => (given(value) ? check(value, name) : null);
const CHECKS = {
  factor: checkFactor, original_max_position_embeddings: checkLength, seq_len: orNone(checkLength),
  short_factor: checkFactorList, long_factor: checkFactorList, beta_fast: checkPositive, beta_slow: checkPositive,
  attention_factor: orNone(checkPositive), mscale: orNone(checkPositive), mscale_all_dim: orNone(checkPositive),
  truncate: (v, name) => { if (typeof v !== "boolean") throw typeError(`${name} must be True or False, got ${repr(v)} of type ${typeName(v)}`); return v; },
  low_freq_factor: checkPositive, high_freq_factor: checkPositive,
};

function bind(reg, method, params) {
  const spec = reg.methods[method];
  const allowed = [...spec.required, ...Object.keys(spec.optional)];
  const unknown = Object.keys(params).filter((k) => !allowed.includes(k)).sort();
  if (unknown.length) throw typeError(`unknown parameter(s) ${unknown.join(", ")} for method ${repr(method)}; it takes ${allowed.join(", ") || "no parameters"}`);
  const missing = spec.required.filter((k) => !Object.prototype.hasOwnProperty.call(params, k));
  if (missing.length) throw typeError(`method ${repr(method)} requires parameter(s) ${missing.join(", ")}`);
  const out = {};
  for (const [name, value] of Object.entries({ ...spec.optional, ...params })) out[name] = CHECKS[name](value, name);
  return out;
}

const turns = (dim, b, length) => plainFrequencies(dim, b).map((t) => length * t / (2 * Math.PI));
const correctionIndex = (t, dim, b, length) => dim * Math.log(length / (2 * Math.PI * t)) / (2 * Math.log(b));
const clip01 = (x) => Math.min(Math.max(x, 0), 1);
const blend = (thetas, factor, keep) => thetas.map((t, i) => (1 - keep[i]) * t / factor + keep[i] * t);

function yarnAttentionFactor(factor, mscale, mscaleAllDim) {
  if ((mscale === null) !== (mscaleAllDim === null)) {
    throw valueError("mscale and mscale_all_dim must be given together (their ratio sets the attention factor), " +
      `got mscale=${repr(mscale)} and mscale_all_dim=${repr(mscaleAllDim)}`);
  }
  const temperature = (w) => 0.1 * w * Math.log(factor) + 1;
  return mscale === null ? temperature(1) : temperature(mscale) / temperature(mscaleAllDim);
}

const METHOD_FUNCTIONS = {
  default: (dim, b) => [plainFrequencies(dim, b), 1],
  linear: (dim, b, p) => [plainFrequencies(dim, b).map((t) => t / p.factor), 1],
  ntk: (dim, b, p) => {
    if (dim < 4) throw valueError(`dim must be >= 4 for an NTK-aware base change (the exponent is dim / (dim - 2)), got ${dim}`);
    return [plainFrequencies(dim, b * p.factor ** (dim / (dim - 2))), 1];
  },
  dynamic: (dim, b, p) => {
    if (dim < 4) throw valueError(`dim must be >= 4 for an NTK-aware base change (the exponent is dim / (dim - 2)), got ${dim}`);
    if (p.seq_len === null) throw typeError("method 'dynamic' requires parameter(s) seq_len");
    const L = p.original_max_position_embeddings;
    const scale = p.factor * Math.max(p.seq_len, L) / L - (p.factor - 1);
    return [plainFrequencies(dim, b * scale ** (dim / (dim - 2))), 1];
  },
  yarn: (dim, b, p) => {
    if (p.beta_fast <= p.beta_slow) {
      throw valueError("beta_fast must be greater than beta_slow (rotations over the original context at which the " +
        `ramp ends and starts), got beta_fast=${p.beta_fast} and beta_slow=${p.beta_slow}`);
    }
    const L = p.original_max_position_embeddings;
    let start = correctionIndex(p.beta_fast, dim, b, L), end = correctionIndex(p.beta_slow, dim, b, L);
    if (p.truncate) [start, end] = [Math.floor(start), Math.ceil(end)];
    [start, end] = [Math.max(start, 0), Math.min(end, dim - 1)];
    if (start === end) end += 0.001;
    const keep = Array.from({ length: dim / 2 }, (_, i) => 1 - clip01((i - start) / (end - start)));
    const suggested = yarnAttentionFactor(p.factor, p.mscale, p.mscale_all_dim);
    return [blend(plainFrequencies(dim, b), p.factor, keep), p.attention_factor === null ? suggested : p.attention_factor];
  },
  llama3: (dim, b, p) => {
    const low = p.low_freq_factor, high = p.high_freq_factor;
    if (low > high) {
      throw valueError(`low_freq_factor must not exceed high_freq_factor, got low_freq_factor=${low} and high_freq_factor=${high}`);
    }
    const r = turns(dim, b, p.original_max_position_embeddings);
    const keep = high === low ? r.map((x) => Number(x > high)) : r.map((x) => clip01((x - low) / (high - low)));
    return [blend(plainFrequencies(dim, b), p.factor, keep), 1];
  },
  longrope: (dim, b, p) => {
    for (const name of ["short_factor", "long_factor"]) {
      if (p[name].length !== dim / 2) {
        throw valueError(`${name} must have one factor per rotated pair, dim // 2 = ${dim / 2} values, got ${p[name].length}`);
      }
    }
    const L = p.original_max_position_embeddings;
    const rescale = p.seq_len !== null && p.seq_len > L ? p.long_factor : p.short_factor;
    let factor = p.attention_factor;
    if (factor === null) {
      if (p.factor === 1) factor = 1;
      else if (L < 2) throw valueError(`original_max_position_embeddings must be >= 2 for LongRoPE's attention factor (it divides by ln L), got ${L}`);
      else factor = Math.sqrt(1 + Math.log(p.factor) / Math.log(L));
    }
    return [plainFrequencies(dim, b).map((t, i) => t / rescale[i]), factor];
  },
};

function scaledFrequencies(reg, method, dim, b, params) {
  checkChoice(method, Object.keys(reg.methods), "method");
  if (!isInteger(dim)) throw typeError(`dim must be a positive even integer, got ${repr(dim)} of type ${typeName(dim)}`);
  if (dim <= 0 || dim % 2) throw valueError(`dim must be a positive even integer (RoPE rotates pairs of coordinates), got ${dim}`);
  if (!isReal(b)) throw typeError(`base must be a finite real number > 1, got ${repr(b)} of type ${typeName(b)}`);
  if (!Number.isFinite(b) || b <= 1) throw valueError(`base must be a finite real number > 1, got ${b}`);
  return METHOD_FUNCTIONS[method](dim, b, bind(reg, method, params));
}

export function proportional(dim, b, pairs, factor = 1) {
  pairs = pairs === null || pairs === undefined ? dim / 2 : pairs;
  if (!isReal(factor) || !Number.isFinite(factor) || factor <= 0) {
    throw valueError(`factor must be a finite real number > 0 for proportional RoPE, got ${factor}`);
  }
  const inv = Array.from({ length: dim / 2 }, (_, i) => (i < pairs ? b ** (-2 * i / dim) : 0));
  return [inv.map((t) => t / factor), 1];
}

function yarnEqualBetas(reg, dim, b, params) {
  const factor = params.factor;
  const L = positiveInt(params.original_max_position_embeddings, "original_max_position_embeddings");
  const edge = correctionIndex(params.beta_fast, dim, b, L);
  let start = edge, end = edge;
  if (given(params.truncate) ? params.truncate : true) [start, end] = [Math.floor(edge), Math.ceil(edge)];
  [start, end] = [Math.max(start, 0), Math.min(end, dim - 1)];
  if (start === end) end += 0.001;
  const keep = Array.from({ length: dim / 2 }, (_, i) => 1 - clip01((i - start) / (end - start)));
  const thetas = plainFrequencies(dim, b);
  const [, attention] = scaledFrequencies(reg, "yarn", dim, b, { ...params, beta_fast: params.beta_slow + 1 });
  return [thetas.map((t, i) => t / factor * (1 - keep[i]) + t * keep[i]), attention];
}

/** Hunyuan's NTK-alpha: plain RoPE at base b * alpha**(dim / (dim - 2)), at every length. */
function ntkAlpha(dim, b, alpha) {
  if (!isReal(alpha) || !Number.isFinite(alpha) || alpha <= 0) {
    throw valueError(`alpha must be a finite real number > 0 (NTK-alpha stretches the base by alpha**(d / (d - 2))), got ${repr(alpha)}`);
  }
  if (dim <= 2) throw valueError(`NTK-alpha divides by d - 2: it needs more than 2 rotated dims, got ${dim}`);
  return [plainFrequencies(dim, b * alpha ** (dim / (dim - 2))), 1];
}

/** The frequency functions of rope_edu.models.rope_types, by their Python names:
 * (reg, dim, b, params, rotatingPairs) -> [inv_freq, attention_factor]. */
export const FREQUENCIES = {
  _default_frequencies: (reg, dim, b, p) => scaledFrequencies(reg, "default", dim, b, p),
  _linear_frequencies: (reg, dim, b, p) => scaledFrequencies(reg, "linear", dim, b, p),
  _dynamic_frequencies: (reg, dim, b, p) => scaledFrequencies(reg, "dynamic", dim, b, p),
  _yarn_frequencies: (reg, dim, b, p) => (given(p.beta_fast) && p.beta_fast === p.beta_slow
    ? yarnEqualBetas(reg, dim, b, p) : scaledFrequencies(reg, "yarn", dim, b, p)),
  _llama3_frequencies: (reg, dim, b, p) => scaledFrequencies(reg, "llama3", dim, b, p),
  _longrope_frequencies: (reg, dim, b, p) => scaledFrequencies(reg, "longrope", dim, b, p),
  _proportional_frequencies: (reg, dim, b, p, rotatingPairs) => proportional(dim, b, rotatingPairs, p.factor ?? 1),
  _ntk_alpha_frequencies: (reg, dim, b, p) => ntkAlpha(dim, b, p.alpha),
};

/** The frequencies of rope_type `ropeType` (RopeType.frequencies of its entry in the registry's rope_types). */
export function frequencies(reg, ropeType, dim, b, params, rotatingPairs) {
  const name = reg.rope_types[ropeType].frequencies;
  if (!Object.prototype.hasOwnProperty.call(FREQUENCIES, name)) {
    throw new Error(`the registry names a frequency function ${name} that this interpreter does not implement`);
  }
  return FREQUENCIES[name](reg, dim, b, params, rotatingPairs);
}
