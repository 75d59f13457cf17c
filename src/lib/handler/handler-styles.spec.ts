/**
 * A handler configured to refuse as a real client does (issue #25, `client.denialStyle`): the real
 * SDK server receives exactly that client's error — its `McpError` code and message, no data —
 * while the audit record keeps the lab's reason.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../machine/policy';
import { DENIAL_STYLES, FOREIGN_REFUSALS } from '../machine/refusal-styles';
import type { HandlerAuditRecord } from './audit';
import { createSamplingPolicy } from './handler';
import { ask, pair, until } from './sdk-pair.testing';

describe('a handler with a refusal style', () => {
  it.each(DENIAL_STYLES.filter((s) => s !== 'lab'))(
    '%s: the server SDK raises that client’s McpError; the audit keeps user.denied',
    async (style) => {
      const records: HandlerAuditRecord[] = [];
      const lab = createSamplingPolicy({
        policy: defaultPolicy(),
        client: { denialStyle: style },
        consent: () => 'deny',
        sample: () => ({ content: { type: 'text', text: 'never' } }),
        audit: (r) => void records.push(r)
      });
      const p = await pair(lab);
      const err = await p.server.createMessage(ask()).then(
        () => null,
        (e: unknown) => e
      );
      const r = FOREIGN_REFUSALS[style];
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(r.code);
      expect((err as McpError).message).toBe(`MCP error ${r.code}: ${r.message}`);
      expect((err as McpError).data).toBeUndefined();
      expect(records.map((a) => [a.outcome, a.reason])).toEqual([['denied', 'user.denied']]);
      await p.close();
      await lab.close();
    }
  );

  it('vscode: what the server gets is indistinguishable by code from its own closed connection', async () => {
    let asked = 0;
    const lab = createSamplingPolicy({
      policy: defaultPolicy(),
      client: { denialStyle: 'vscode' },
      // The first dialog says no; the second is never answered, and its connection goes.
      consent: () => (++asked === 1 ? 'deny' : new Promise<'deny'>(() => {})),
      sample: () => ({ content: { type: 'text', text: 'never' } })
    });
    const p = await pair(lab);
    const refused = await p.server.createMessage(ask()).catch((e: unknown) => e);
    const pending = p.server.createMessage(ask('another')).catch((e: unknown) => e);
    await until(() => asked === 2, 'the second dialog');
    await p.close();
    const closed = await pending;
    expect(closed).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(ErrorCode.ConnectionClosed);
    expect((closed as McpError).code).toBe(ErrorCode.ConnectionClosed);
    await lab.close();
  });
});
