/**
 * The ready-made scenarios the picker offers (files in static/scenarios/). A unit test keeps this
 * list and the folder in step, so a new file cannot be forgotten here.
 */
export const READY_MADE = [
  { name: 'reconnect-bypass', title: 'Reconnect bypass' },
  { name: 'silence-vs-denial', title: 'Silence versus a denial frame' },
  { name: 'retryable-loop', title: 'A permanent refusal marked retryable' },
  { name: 'transient-marked-permanent', title: 'A transient throttle marked permanent' },
  { name: 'serialiser-variants', title: 'Serialiser variants' },
  { name: 'prompt-mutator', title: 'The prompt mutator' },
  { name: 'trimmed-context', title: 'Trimmed context' },
  { name: 'budget-window', title: 'The budget window and resetsAt' },
  { name: 'tired-user', title: 'The tired user' },
  { name: 'rfc-budget-caps', title: "The RFC's budget caps, with its own numbers" },
  { name: 'prompt-cache-trap', title: 'The prompt-cache trap' },
  { name: 'in-flight-duplicates', title: 'In-flight duplicates' },
  { name: 'direct-provider', title: 'The direct-provider baseline' },
  { name: 'restart-client', title: 'Restart the client' },
  { name: 'refusal-codes', title: 'Same refusal, another code' },
  { name: 'who-hears', title: 'Who hears the no?' },
  { name: 'cheap-calls', title: 'Cheap calls without asking' }
] as const;

export const DEFAULT_SCENARIO = 'reconnect-bypass';
