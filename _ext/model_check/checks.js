// What the "Check your model" page says beyond rope_spec: the layer plan, the pairs against the model's
// contexts, and the traps the book teaches (bug atlas, chapters 8 to 10). Reads a spec made by
// rope_spec.js and the parsed config.json. A plain ES module (node runs it in tests/test_model_check.py).

import { ropeSpec, familyOf, repr, fmtG, SpecError } from "./rope_spec.js";

const TWO_PI = 2 * Math.PI;
const MAX_LAYERS = 512;   // layers listed in the plan (a config with more is summarised by its first ones)
const BF16_ANGLE = 0.1;   // rad: the angle error the bf16 warning reports from

/** Layer count of a config (num_hidden_layers, n_layer, num_layers, or its layer_types), or null. */
export function layerCount(data) {
  for (const key of ["num_hidden_layers", "n_layer", "num_layers"]) {
    if (Number.isInteger(data?.[key]) && data[key] > 0) return data[key];
  }
  return Array.isArray(data?.layer_types) ? data.layer_types.length : null;
}

/** Layer indices as short ranges: [0, 1, 2, 4] -> "0–2, 4". */
export function ranges(indices) {
  const out = [];
  for (let k = 0; k < indices.length; k++) {
    let j = k;
    while (j + 1 < indices.length && indices[j + 1] === indices[j] + 1) j++;
    out.push(j > k ? `${indices[k]}–${indices[j]}` : `${indices[k]}`);
    k = j;
  }
  return out.join(", ");
}

/** One line for a layer's RoPE: what the plan groups layers by. */
export function layerSummary(spec) {
  const type = spec.layer_type;
  if (!spec.uses_rope) {
    const why = spec.no_rope_reason || "NoPE layer";
    return type ? `${type}: no RoPE (${why})` : `no RoPE (${why})`;
  }
  const scaling = spec.rope_type === "default" ? "no scaling" : `${spec.rope_type} scaling`;
  const base = spec.base.toLocaleString("en-US");
  return type ? `${type}: RoPE on ${spec.rotary_dim} of ${spec.head_dim} dims, base ${base}, ${scaling}`
    : `RoPE on ${spec.rotary_dim} of ${spec.head_dim} dims, base ${base}, ${scaling}`;
}

/**
 * Every layer's RoPE, grouped: {count, shown, types (each layer's type), groups: [{layers, summary}], differ},
 * or null without a layer count. A layer rope_spec refuses is grouped under its message.
 */
export function layerPlan(reg, config) {
  const { data, family } = familyOf(reg, config);
  const n = data && family ? layerCount(data) : null;
  if (!n) return null;
  const groups = new Map();
  const shown = Math.min(n, MAX_LAYERS);
  const types = [];
  for (let i = 0; i < shown; i++) {
    let summary;
    types.push(null);
    try {
      const spec = ropeSpec(reg, config, { layer: i });
      types[i] = spec.layer_type;
      summary = layerSummary(spec);
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      summary = `refused: ${err.message}`;
    }
    if (!groups.has(summary)) groups.set(summary, []);
    groups.get(summary).push(i);
  }
  const list = [...groups].map(([summary, layers]) => ({ layers, summary }));
  return { count: n, shown, types, groups: list, differ: list.length > 1 };
}

/** The training and maximum context of a model: from its published entry, else from its config. */
export function contexts(data, spec, published = null) {
  const params = spec?.rope_params || {};
  const mpe = Number.isInteger(data?.max_position_embeddings) ? data.max_position_embeddings
    : Number.isInteger(data?.n_positions) ? data.n_positions : spec?.max_positions ?? null;
  // a rope_type that holds the loaded length there (dynamic NTK) says nothing of the trained context
  const original = Number.isInteger(params.original_max_position_embeddings) && spec.loaded_seq_len !== "original_max_position_embeddings"
    ? params.original_max_position_embeddings : null;
  const trained = published?.trained ?? original ?? mpe;
  const maximum = published?.extended ?? mpe ?? trained;
  const source = {
    trained: published?.trained ? "as its authors report it" : original ? "from original_max_position_embeddings"
      : mpe ? "from max_position_embeddings: the config states no shorter training length, so this may overstate it" : "",
    maximum: published?.extended ? "as its authors report it" : mpe ? "from max_position_embeddings" : "",
  };
  return { trained, maximum: Math.max(maximum ?? 0, trained ?? 0) || null, source };
}

/**
 * The frequency of every pair, with its wavelength, whether scaling moved it, its turns over the training
 * context at its unscaled frequency (what pre-training saw: r_i = L θ_i / 2π, as YaRN and Llama 3.1 count
 * them) and its turns over the maximum context at the frequency the model uses.
 */
export function pairTable(spec, ctx) {
  // a scaling that depends on the length (dynamic NTK, LongRoPE) changes the frequencies past the original
  // context: what the model uses at the maximum context, not at loading
  const inv = spec.depends_on_length && ctx.maximum ? spec.inv_freq(ctx.maximum) : spec.inv_freq();
  const plain = spec.plain_inv_freq();
  return inv.map((theta, i) => {
    const ratio = plain[i] === 0 ? 1 : theta / plain[i];
    return {
      pair: i,
      inv_freq: theta,
      wavelength: theta === 0 ? Infinity : TWO_PI / theta,
      ratio,
      moved: Math.abs(ratio - 1) > 1e-12,
      turns_trained: ctx.trained ? ctx.trained * plain[i] / TWO_PI : null,
      turns_max: ctx.maximum ? ctx.maximum * theta / TWO_PI : null,
    };
  });
}

/** Where the layer's head_dim comes from, in words (describe() names it only when a default is used). */
export function headSource(reg, config, spec) {
  const { data, family } = familyOf(reg, config);
  if (!data || !family || !spec) return "";
  const d = spec.head_dim;
  if (family.rotary === "mla") {
    return `head_dim ${d} = qk_nope_head_dim ${data.qk_nope_head_dim} + qk_rope_head_dim ${data.qk_rope_head_dim} ` +
      "(multi-head latent attention: a head_dim field, where the config has one, is the rotary part only).";
  }
  const hidden = data.hidden_size ?? data.n_embd, heads = data.num_attention_heads ?? data.n_head;
  const split = `hidden_size / num_attention_heads = ${hidden} / ${heads}`;
  if (family.read || family.head === "split") return `head_dim ${d} = ${split}: this family's code always computes it so.`;
  if (family.head !== "head_dim") return `head_dim ${d} is the config's ${family.head}.`;
  const typed = family.type_head && spec.layer_type && family.type_head[spec.layer_type];
  if (typed && !data.per_layer_config) {
    return data[typed[0]] === undefined
      ? `head_dim ${d} is ${typed[0]} (the config class default): ${family.label}'s ${spec.layer_type} layers have heads of their own size.`
      : `head_dim ${d} is ${typed[0]}: ${family.label}'s ${spec.layer_type} layers have heads of their own size.`;
  }
  if (Number.isInteger(data.head_dim) && data.head_dim === d) return `head_dim ${d} is stated in the config (head_dim).`;
  if (d !== data.head_dim && data.per_layer_config) return `head_dim ${d} comes from per_layer_config for this layer.`;
  if (!("head_dim" in data) && family.head_default !== null && family.head_default !== undefined) {
    return `head_dim ${d} is the config class default: the config leaves head_dim out.`;
  }
  return `head_dim ${d} = ${split} (the config states no head_dim).`;
}

// --- the traps -------------------------------------------------------------------------------

/** float64 -> the float32 inv_freq buffer -> bf16 (round to nearest even), as model.to(torch.bfloat16) does. */
export function bf16(x) {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0] = (u[0] + 0x7fff + ((u[0] >>> 16) & 1)) & 0xffff0000;
  return f[0];
}

const blockOf = (value) => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const out = { ...value };
  if ("type" in out && !("rope_type" in out)) { out.rope_type = out.type; delete out.type; }
  return out;
};

function schemasWarning(data, spec) {
  const params = blockOf(data.rope_parameters), scaling = blockOf(data.rope_scaling);
  if (!params) return null;
  const nested = Object.values(params).some((v) => v !== null && typeof v === "object" && !Array.isArray(v));
  const parts = [];
  if (scaling) {
    const clash = Object.keys(params).filter((k) => k in scaling && JSON.stringify(params[k]) !== JSON.stringify(scaling[k]));
    const lost = Object.keys(params).filter((k) => !(k in scaling));
    parts.push("This config states its RoPE twice: rope_parameters (transformers 5's field) and rope_scaling " +
      "(transformers 4's). transformers 5 keeps rope_scaling as the whole description and drops the rest of rope_parameters; " +
      "transformers 4 never reads rope_parameters.");
    if (clash.length) {
      const pairs = clash.map((k) => `rope_parameters.${k} = ${repr(params[k])} but rope_scaling.${k} = ${repr(scaling[k])}`);
      parts.push(`They disagree: ${pairs.join("; ")}.`);
    }
    if (lost.includes("rope_theta") && !nested) {
      const top = data.rope_theta !== undefined && data.rope_theta !== null;
      const from = top ? `the top-level rope_theta = ${repr(data.rope_theta)}.`
        : spec && spec.uses_rope ? `the config class's default, without a warning (${spec.base.toLocaleString("en-US")} here).`
          : "the config class's default, without a warning.";
      parts.push(`rope_parameters.rope_theta = ${repr(params.rope_theta)} is among what is dropped: the base comes from ${from}`);
    } else if (lost.length && !nested) {
      parts.push(`Dropped: ${lost.map((k) => `rope_parameters.${k}`).join(", ")}.`);
    }
    parts.push("Keep one of the two.");
  } else if (!nested && data.rope_theta !== undefined && data.rope_theta !== null && params.rope_theta !== undefined &&
    params.rope_theta !== null && data.rope_theta !== params.rope_theta) {
    parts.push(`The base is stated twice, differently: rope_theta = ${repr(data.rope_theta)} (transformers 4's field) and ` +
      `rope_parameters.rope_theta = ${repr(params.rope_theta)} (transformers 5's). Each version reads its own field.`);
  }
  if (!parts.length) return null;
  return { id: "schemas", title: spec ? "Both config schemas present" : "Both config schemas present and disagreeing",
    text: parts.join(" "), parts };
}

function headWarning(reg, config, data, family, spec) {
  const hidden = data.hidden_size ?? data.n_embd, heads = data.num_attention_heads ?? data.n_head;
  if (family && family.rotary !== "mla" && family.head === "head_dim" && spec && !Number.isInteger(data.head_dim) &&
    heads === undefined) {
    // a released config may leave both to the config class (Gemma 3 4B: 256-dim heads, 8 heads, hidden 2560)
    return { id: "head_dim", title: "Head size left to the config class", text: `${headSource(reg, config, spec)} ` +
      "The config states neither head_dim nor num_attention_heads: both come from the defaults of " +
      `${family.label}'s config class, and the code uses ${spec.head_dim}-dim heads. A tool that derives the head size ` +
      "from hidden_size / num_attention_heads, with defaults of its own (an older converter or engine), may build heads " +
      "of another size. Before converting the model, write head_dim and num_attention_heads into the config." };
  }
  if (!family || family.rotary === "mla" || !Number.isInteger(hidden) || !Number.isInteger(heads) || heads <= 0) return null;
  const split = hidden / heads;
  const stated = Number.isInteger(data.head_dim) ? data.head_dim : null;
  if (family.head === "split") {
    if (stated === null || stated === split) return null;
    return { id: "head_dim", title: "head_dim that the code ignores", text: `head_dim = ${stated}, but ${family.label}'s ` +
      `code computes the head size as hidden_size / num_attention_heads = ${hidden} / ${heads} = ${split} and never reads head_dim.` };
  }
  const used = spec ? spec.head_dim : stated;
  if (used === null || used === split || family.head !== "head_dim") return null;
  const where = spec ? headSource(reg, config, spec) : `head_dim = ${stated}.`;
  return { id: "head_dim", title: "head_dim ≠ hidden_size / num_attention_heads", text: `${where} But hidden_size / ` +
    `num_attention_heads = ${hidden} / ${heads} = ${fmtG(split, 6)}. The code uses ${used}-dim heads; a tool that derives ` +
    `the head size from hidden_size (an older converter or engine) builds ${Number.isInteger(split) ? split : "non-integer"}-dim ` +
    "heads: different frequencies θ_i = b^(−2i/d) for every pair, and projections that do not fit." };
}

function partialWarning(data, family) {
  if (!family) return null;
  const stated = [["partial_rotary_factor", data.partial_rotary_factor]];
  for (const name of ["rope_parameters", "rope_scaling"]) {
    const block = blockOf(data[name]);
    if (block) stated.push([`${name}.partial_rotary_factor`, block.partial_rotary_factor]);
  }
  const found = stated.filter(([, v]) => typeof v === "number" && v !== 1);
  if (!found.length) return null;
  const what = found.map(([k, v]) => `${k} = ${v}`).join(", ");
  if (family.rotary === "head") {
    return { id: "partial_rotary", title: "partial_rotary_factor that the family ignores", text: `${what}, but ` +
      `the ${repr(family.key)} family's default rotary embedding rotates the whole head and ignores it, while the scaled RoPE types of ` +
      "transformers (linear, dynamic, yarn, longrope, llama3) compute int(head_dim × factor) frequencies: with a scaling " +
      "block, cos and sin no longer fit the head and the forward pass fails (\"The size of tensor a … must match the size " +
      "of tensor b\"). This page (like rope_spec) refuses the config rather than guess: remove partial_rotary_factor (this family " +
      "rotates the whole head) or set it to 1." };
  }
  if (family.read || family.rotary === "rotary_dim") {
    return { id: "partial_rotary", title: "partial_rotary_factor that the family ignores",
      text: `${what}, but ${family.label}'s code reads rotary_dim for the number of rotated dims and never this factor.` };
  }
  return null;
}

function loaderWarning(reg, data, spec, ctx) {
  if (!spec || !spec.uses_rope) return null;
  const parts = [];
  const params = blockOf(data.rope_parameters);
  const v5only = params && !blockOf(data.rope_scaling) && (data.rope_theta === undefined || data.rope_theta === null);
  const rows = spec.rope_type === "default" ? [] : pairTable(spec, { trained: null, maximum: ctx.maximum });
  const moved = rows.filter((r) => r.moved).length;
  if (spec.rope_type !== "default") {
    // each sentence one string with its values, as the page shows it through the catalog
    const at = spec.depends_on_length && ctx.maximum ? ctx.maximum.toLocaleString("en-US") : null;
    // what a transformers 4 release from before this rope_type existed does (its registry entry)
    const older = reg.rope_types[spec.rope_type].older_transformers;
    const past = (spec.rope_params.original_max_position_embeddings ?? 0).toLocaleString("en-US");
    const effect = moved === 0
      ? (at ? `the scaling moves no pair up to ${at} tokens (it acts only past ${past} tokens), so nothing changes up to ` +
          "there; past it plain RoPE extrapolates"
        : `the scaling moves no pair up to the maximum context (it acts only past ${past} tokens), so nothing changes up ` +
          "to there; past it plain RoPE extrapolates")
      : at ? `${moved} of ${rows.length} pairs, the ones the scaling moves at ${at} tokens, would turn at their unscaled frequencies`
        : `${moved} of ${rows.length} pairs, the ones the scaling moves, would turn at their unscaled frequencies`;
    const drop = spec.attention_factor !== 1
      ? "that builds the frequencies from the base alone (an older converter or inference engine, a hand-written RoPE) " +
        `drops it silently and runs plain RoPE: ${effect}, and cos and sin would lose their factor ${fmtG(spec.attention_factor, 6)}.`
      : "that builds the frequencies from the base alone (an older converter or inference engine, a hand-written RoPE) " +
        `drops it silently and runs plain RoPE: ${effect}.`;
    parts.push(older ? `rope_type ${repr(spec.rope_type)}: ${older}. Code ${drop}` : `rope_type ${repr(spec.rope_type)}: code ${drop}`);
  }
  if (v5only && (spec.rope_type !== "default" || spec.base !== 10000)) {
    const base = spec.base.toLocaleString("en-US");
    parts.push(spec.rope_type !== "default"
      ? "This config states RoPE only in rope_parameters, transformers 5's field: transformers 4 does not read it " +
        `and would run its config class's default base (10,000 for most families) instead of ${base}, with no scaling.`
      : "This config states RoPE only in rope_parameters, transformers 5's field: transformers 4 does not read it " +
        `and would run its config class's default base (10,000 for most families) instead of ${base}.`);
  }
  if (!parts.length) return null;
  return { id: "old_loader", title: "A scaling an older loader would refuse or drop", text: parts.join(" "), parts };
}

function bf16Warning(spec, ctx) {
  if (!spec || !spec.uses_rope || !ctx.maximum) return null;
  const inv = spec.inv_freq().map((t) => Math.fround(t));
  let worst = 0, pair = 0;
  let faster = true;
  inv.forEach((t, i) => { const d = Math.abs(bf16(t) - t); if (d > worst) { worst = d; pair = i; faster = bf16(t) > t; } });
  if (worst === 0) return null;
  const atMax = ctx.maximum * worst;
  if (atMax < 0.01) return null;
  const from = Math.ceil(BF16_ANGLE / worst);
  return { id: "bf16", title: "Angles a bf16 inv_freq would round", text: "If a model-wide cast such as " +
    "model.to(torch.bfloat16) rounds the inv_freq buffer (8 significant bits), pair " +
    `${pair} turns ${fmtG(worst, 3)} rad per position too ${faster ? "fast" : "slow"}: its angle is off by ${fmtG(atMax, 3)} rad at ` +
    `position ${ctx.maximum.toLocaleString("en-US")}, and by more than ${BF16_ANGLE} rad from position ${from.toLocaleString("en-US")} on. ` +
    "Load in the dtype you want (from_pretrained(..., dtype=torch.bfloat16)) instead of casting afterwards." };
}

/**
 * The traps this config falls into: [{id, title, text, parts}] (``parts``: the sentences of ``text``, each one string
 * with its values, what the Chinese page translates). ``spec`` may be null (rope_spec refused it).
 */
export function warnings(reg, config, spec, published = null) {
  const { data, family } = familyOf(reg, config);
  if (!data) return [];
  const ctx = contexts(data, spec, published);
  return [schemasWarning(data, spec), headWarning(reg, config, data, family, spec), partialWarning(data, family),
    loaderWarning(reg, data, spec, ctx), bf16Warning(spec, ctx)].filter(Boolean).map((w) => ({ ...w, parts: w.parts || [w.text] }));
}
