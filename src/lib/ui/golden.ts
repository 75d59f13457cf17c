/** The scenarios whose outputs must be byte-identical in Node and in a Web Worker. */
export const GOLDEN_SCENARIOS = [
  'reconnect-bypass',
  'rfc-budget-caps',
  'serialiser-variants'
] as const;
