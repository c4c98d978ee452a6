// Runs the browser's rope_spec interpreter (_ext/model_check/rope_spec.js) on many configurations for
// tests/test_model_check.py: reads {registry, configs, cases: [{config (an index), select, seq_len}]} as JSON on stdin and
// writes one result per case (the spec's fields and frequencies, or the error) as JSON on stdout.
import { readFileSync } from "node:fs";
import { ropeSpec, CALLABLES, LAYER_RULES, SpecError } from "../_ext/model_check/rope_spec.js";
import { PARAMS } from "../_ext/model_check/config.js";
import { FREQUENCIES } from "../_ext/model_check/scaling.js";
import { headSource, layerPlan, warnings } from "../_ext/model_check/checks.js";

const input = JSON.parse(readFileSync(0, "utf8"));
const reg = input.registry;
const results = input.cases.map(({ config: index, select, seq_len: seqLen, analyse }) => {
  const config = input.configs[index];
  try {
    const spec = ropeSpec(reg, config, { layerType: select.layer_type ?? null, layer: select.layer ?? null });
    const out = {};
    for (const [k, v] of Object.entries(spec)) if (typeof v !== "function") out[k] = v;
    out.inv_freq = spec.uses_rope ? spec.inv_freq() : null;
    out.inv_freq_long = spec.uses_rope && seqLen ? spec.inv_freq(seqLen) : null;
    out.describe = spec.describe();
    if (analyse) {
      const analysis = { warnings: warnings(reg, config, spec), plan: layerPlan(reg, config), head: headSource(reg, config, spec) };
      return { spec: out, analysis };
    }
    return { spec: out };
  } catch (err) {
    if (!(err instanceof SpecError)) return { crash: String(err && err.stack || err) };
    const res = { error: { kind: err.kind, message: err.message } };
    if (analyse) res.analysis = { warnings: warnings(reg, config, null), plan: layerPlan(reg, config) };
    return res;
  }
});
process.stdout.write(JSON.stringify({ callables: Object.keys(CALLABLES), params: Object.keys(PARAMS),
  frequencies: Object.keys(FREQUENCIES), layer_rules: Object.keys(LAYER_RULES), results }));
