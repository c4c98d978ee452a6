// JSON values as rope_edu's Python code sees them: None, truthiness, ==, repr() in messages, and the
// argument checks of rope_edu._checks. Shared by the interpreter's modules (rope_spec.js, scaling.js).

/** An error of rope_spec: kind "ValueError" or "TypeError", as the Python function raises. */
export class SpecError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}
export const valueError = (message) => new SpecError("ValueError", message);
export const typeError = (message) => new SpecError("TypeError", message);

// --- Python's view of JSON values -------------------------------------------------------------

export const own = (obj, key) => (isMapping(obj) && Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined);
export const given = (v) => v !== undefined && v !== null;           // Python: `is not None`
export const isMapping = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
export const isReal = (v) => typeof v === "number";                  // numbers.Real, never a bool
export const isInteger = (v) => typeof v === "number" && Number.isInteger(v);
export const truthy = (v) => !(v === undefined || v === null || v === false || v === 0 || v === "" ||
  (Array.isArray(v) && v.length === 0) || (isMapping(v) && Object.keys(v).length === 0));
export const typeName = (v) => (v === null || v === undefined ? "NoneType" : typeof v === "boolean" ? "bool"
  : typeof v === "string" ? "str" : typeof v === "number" ? (Number.isInteger(v) ? "int" : "float")
    : Array.isArray(v) ? "list" : "dict");

/** Python's repr() of a JSON value (numbers as JavaScript writes them). */
export function repr(v) {
  if (v === undefined || v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : (Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf");
  if (Array.isArray(v)) return `[${v.map(repr).join(", ")}]`;
  return `{${Object.entries(v).map(([k, x]) => `${repr(k)}: ${repr(x)}`).join(", ")}}`;
}

/** Python's == on JSON values. */
export function equal(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  }
  if (isMapping(a) || isMapping(b)) {
    if (!isMapping(a) || !isMapping(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
  }
  return (a ?? null) === (b ?? null);
}

export const listRepr = (xs) => `[${xs.map((x) => (x === null || x === undefined ? "None" : String(x))).join(", ")}]`;


export function positiveInt(value, name) {
  if (!isInteger(value)) {
    throw typeError(`${name} must be a positive integer, got ${repr(value)} of type ${typeName(value)}`);
  }
  if (value <= 0) throw valueError(`${name} must be a positive integer, got ${value}`);
  return value;
}

export function checkInt(value, name, minimum) {
  const what = minimum === undefined ? "an integer" : `an integer >= ${minimum}`;
  if (!isInteger(value)) throw typeError(`${name} must be ${what}, got ${repr(value)} of type ${typeName(value)}`);
  if (minimum !== undefined && value < minimum) throw valueError(`${name} must be ${what}, got ${value}`);
  return value;
}

export function checkChoice(value, choices, name) {
  if (typeof value !== "string" || !choices.includes(value)) {
    throw valueError(`unknown ${name} ${repr(value)}; expected one of ${choices.map(repr).join(", ")}`);
  }
  return value;
}
