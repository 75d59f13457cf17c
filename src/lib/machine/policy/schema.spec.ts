import { describe, expect, it } from 'vitest';
// ajv ships with the MCP SDK (a dev dependency): used here to check that the exported JSON
// Schema — what the editor validates against — agrees with the zod schema the runtime uses.
import Ajv2020 from 'ajv/dist/2020.js';
import { parsePolicy } from './parse';
import { DEFAULT_POLICY, defaultPolicy, policyJsonSchema, type Policy } from './schema';

/** DEFAULT_POLICY with a change, as a plain value. */
function edited(edit: (p: Policy) => void): Policy {
  const p = defaultPolicy();
  edit(p);
  return p;
}

describe('the JSON Schema', () => {
  const schema = policyJsonSchema();

  it('is a draft 2020-12 object schema with the policy’s members', () => {
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema['type']).toBe('object');
    const props = schema['properties'] as Record<string, Record<string, unknown>>;
    expect(Object.keys(props)).toEqual(['version', 'defaults', 'servers']);
    expect(props['defaults']!['additionalProperties']).toBe(false);
    expect(Object.keys(props['defaults']!['properties'] as object)).toEqual([
      'sampling',
      'allowedModels',
      'defaultModel',
      'maxInputTokens',
      'maxContext',
      'rateLimit',
      'budget',
      'perCallCap',
      'consent',
      'askAbove'
    ]);
    // Optional even in defaults: a policy written before askAbove stays valid, meaning the same.
    expect(props['defaults']!['required']).not.toContain('askAbove');
    expect(props['servers']!['additionalProperties']).toMatchObject({
      type: 'object',
      additionalProperties: false
    });
  });

  it('describes every member (the editor’s hovers)', () => {
    const undocumented: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (!node || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      for (const [key, sub] of Object.entries((n['properties'] as Record<string, unknown>) ?? {})) {
        if (!(sub as Record<string, unknown>)['description']) undocumented.push(`${path}.${key}`);
        walk(sub, `${path}.${key}`);
      }
      for (const k of ['anyOf', 'oneOf']) for (const s of (n[k] as unknown[]) ?? []) walk(s, path);
      if (n['additionalProperties'] && typeof n['additionalProperties'] === 'object') {
        walk(n['additionalProperties'], `${path}[*]`);
      }
    };
    walk(schema, '$');
    expect(undocumented).toEqual([]);
  });

  it('agrees with the runtime validation', () => {
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
    const cases: unknown[] = [
      DEFAULT_POLICY,
      edited((p) => (p.defaults.perCallCap = { tokens: 100 })),
      edited((p) => (p.defaults.perCallCap = { amount: '1e-3', currency: 'USD' })),
      edited((p) => (p.defaults.budget = { amount: '1', currency: 'usd', windowMs: 1 })),
      edited((p) => (p.servers['x'] = { consent: 'maybe' as 'ask' })),
      { ...DEFAULT_POLICY, extra: true },
      { ...DEFAULT_POLICY, version: 2 },
      edited((p) => (p.defaults.maxInputTokens = 1.5)),
      edited((p) => (p.defaults.askAbove = { amount: '0.002', currency: 'USD' })),
      edited((p) => (p.servers['x'] = { askAbove: null })),
      edited(
        (p) => (p.defaults.askAbove = { amount: 0.002 as unknown as string, currency: 'USD' })
      ),
      edited(
        (p) => (p.defaults.askAbove = { amount: '0.002' } as { amount: string; currency: string })
      )
    ];
    for (const c of cases) expect(validate(c), JSON.stringify(c)).toBe(parsePolicy(c).ok);
  });
});
