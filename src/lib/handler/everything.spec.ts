/**
 * A real third-party MCP server over stdio: `@modelcontextprotocol/server-everything`, whose
 * `trigger-sampling-request` tool sends `sampling/createMessage` to its client. Its client here
 * is the SDK 1.x `Client` with a connection of the handler as the sampling handler: what the
 * server made of each answer is what its tool returns.
 */
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../machine/policy';
import type { HandlerAuditRecord } from './audit';
import { createSamplingPolicy, type SamplingPolicy } from './handler';
import type { ConsentAnswer } from './sources';
import { deferred, untilWithin } from './sdk-pair.testing';
import { fileStore } from './file-store';
import { memoryStore } from './stores';

const entry = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js'
);

async function everything(lab: SamplingPolicy) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [entry, 'stdio'],
    stderr: 'ignore'
  });
  const client = new Client(
    { name: 'policy-lab-handler', version: '1.0.0' },
    { capabilities: { sampling: {} } }
  );
  const conn = lab.connect('everything');
  let handled = 0;
  client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => {
    handled++;
    return conn.handle(request, extra);
  });
  let closed = false;
  client.onclose = () => {
    closed = true;
    conn.close();
  };
  await client.connect(transport);
  const trigger = (prompt: string) =>
    client.callTool({ name: 'trigger-sampling-request', arguments: { prompt, maxTokens: 50 } });
  /** Kill the server process (SIGKILL: no goodbye) and wait for the client to see it gone. */
  const kill = async () => {
    process.kill(transport.pid!, 'SIGKILL');
    await untilWithin(() => closed, 'the client saw the server process die');
  };
  return { client, trigger, kill, handled: () => handled };
}

const text = (r: Awaited<ReturnType<Client['callTool']>>) =>
  (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');

describe('server-everything over stdio', () => {
  it('after a denial: one dialog for every identical call, no model call, the refusal in each tool result', async () => {
    const dialog = deferred<ConsentAnswer>();
    let consents = 0;
    let samples = 0;
    const records: HandlerAuditRecord[] = [];
    const lab = createSamplingPolicy({
      policy: defaultPolicy(),
      consent: () => (consents++, dialog.promise),
      sample: () => {
        samples++;
        return { content: { type: 'text', text: 'never' } };
      },
      audit: (r) => void records.push(r)
    });
    const s = await everything(lab);
    try {
      const tools = await s.client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('trigger-sampling-request');
      const first = [s.trigger('release notes'), s.trigger('release notes')];
      // Should the wait below fail, closing the client rejects these: the failure is the wait's.
      for (const p of first) p.catch(() => {});
      await untilWithin(() => s.handled() === 2, 'both sampling requests reached the handler');
      dialog.resolve('deny');
      const results = [...(await Promise.all(first)), await s.trigger('release notes')];
      expect(consents).toBe(1);
      expect(samples).toBe(0);
      for (const r of results) {
        expect(r.isError).toBe(true);
        expect(text(r)).toContain('-32003');
        expect(text(r)).toMatch(/denied/i);
      }
      expect(records.map((r) => [r.server, r.outcome, r.reason])).toEqual([
        ['everything', 'denied', 'user.denied'],
        ['everything', 'denied', 'user.denied'],
        ['everything', 'denied', 'user.denied']
      ]);
      expect(records.filter((r) => r.consentShown)).toHaveLength(1);
    } finally {
      await s.client.close();
      await lab.close();
    }
  });

  it("an allowed call: the server's tool result carries the sampled text and the policy's model", async () => {
    const lab = createSamplingPolicy({
      policy: defaultPolicy(),
      consent: () => 'allow',
      sample: (params, { model }) => ({
        content: { type: 'text', text: `sampled for ${model}` },
        usage: { outputTokens: 3 }
      })
    });
    const s = await everything(lab);
    try {
      const r = await s.trigger('hello');
      expect(r.isError).toBeFalsy();
      expect(text(r)).toContain('sampled for example-model-v2');
      expect(text(r)).toContain('"model": "example-model-v2"');
    } finally {
      await s.client.close();
      await lab.close();
    }
  });

  describe('the server process killed and started again', () => {
    const refused = (r: Awaited<ReturnType<Client['callTool']>>) => {
      expect(r.isError).toBe(true);
      expect(text(r)).toContain('-32003');
    };

    it('fileStore: a new client process on the same directory refuses without asking', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'everything-restart-'));
      const consents: string[] = [];
      const start = () =>
        createSamplingPolicy({
          policy: defaultPolicy(),
          store: fileStore(dir),
          consent: ({ identity }) => (consents.push(identity), 'deny'),
          sample: () => ({ content: { type: 'text', text: 'never' } })
        });
      const lab1 = start();
      const s1 = await everything(lab1);
      refused(await s1.trigger('release notes'));
      expect(consents).toHaveLength(1);
      await s1.kill();
      await lab1.close();
      // A new policy object on the same directory, as a restarted client would make.
      const lab2 = start();
      const s2 = await everything(lab2);
      try {
        refused(await s2.trigger('release notes'));
        expect(consents).toHaveLength(1);
        expect(s2.handled()).toBe(1);
      } finally {
        await s2.client.close();
        await lab2.close();
      }
    });

    it('memoryStore: the reconnected server is asked about again', async () => {
      let consents = 0;
      const lab = createSamplingPolicy({
        policy: defaultPolicy(),
        store: memoryStore(),
        consent: () => (consents++, 'deny'),
        sample: () => ({ content: { type: 'text', text: 'never' } })
      });
      const s1 = await everything(lab);
      refused(await s1.trigger('release notes'));
      await s1.kill();
      const s2 = await everything(lab);
      try {
        refused(await s2.trigger('release notes'));
        expect(consents).toBe(2);
      } finally {
        await s2.client.close();
        await lab.close();
      }
    });
  });
});
