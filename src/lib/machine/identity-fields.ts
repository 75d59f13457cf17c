/**
 * The members of `params` that make up a request's identity: the prompt (`systemPrompt`,
 * `messages`), what the server asks to see (`includeContext`) and what it asks to run on
 * (`modelPreferences`). `maxTokens`, `temperature`, `stopSequences`, `metadata` and `budget` are
 * left out on purpose: they are knobs a server can nudge without changing what it asks for, and a
 * nudged knob must not make a refused request look new.
 */
export const DEFAULT_IDENTITY_FIELDS = [
  'systemPrompt',
  'messages',
  'includeContext',
  'modelPreferences'
] as const;
