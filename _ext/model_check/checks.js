export function warnings() { return []; }
export function layerPlan() { return null; }
