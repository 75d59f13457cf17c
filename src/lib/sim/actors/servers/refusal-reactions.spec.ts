/**
 * How simulated servers react to each lane refusal style (issue #25): they see only what their
 * SDK raises — an `McpError` with a code, a message and (for the lab's frame only) data — and
 * classify it by the SDK's own `ErrorCode`s.
 */
import { describe, expect, it } from 'vitest';
import { denialFrame, resultFrame } from '../../../machine/frames';
import { DENIAL_STYLES, styleFrame, type DenialStyle } from '../../../machine/refusal-styles';
import { CLOSED_RECONNECT_MS, failureOf, sdkErrorOf } from './base';
import { fakeRun, kinds, last, SERVER, spec, type Responder } from './fake-env';
import { SdkMcpError } from './sdk-error';

/** The user said no: every request is refused, in the lane's style. */
const refused =
  (style: DenialStyle): Responder =>
  (r) =>
    styleFrame(
      denialFrame(r.id, { reason: 'user.denied', server: SERVER, retryable: false }),
      style
    );

describe("what a server's SDK shows it", () => {
  it('an McpError with the code and message, and data only from the lab', () => {
    const lab = sdkErrorOf(refused('lab')({ id: 1 } as never, 0));
    // The SDK's McpError (sdk-error.spec.ts holds our class to it).
    expect(lab).toBeInstanceOf(SdkMcpError);
    expect(lab!.name).toBe('McpError');
    expect(lab!.code).toBe(-32003);
    expect(lab!.message).toBe("MCP error -32003: Sampling denied by the user for server 'srv'");
    expect(lab!.data).toMatchObject({ reason: 'user.denied', retryable: false });

    const vscode = sdkErrorOf(refused('vscode')({ id: 1 } as never, 0));
    expect(vscode!.message).toBe(
      'MCP error -32000: The user has denied permission to call this method.'
    );
    expect(vscode!.data).toBeUndefined();
  });

  it('classifies each style as real server code can', () => {
    const seen = Object.fromEntries(
      DENIAL_STYLES.map((s) => [s, failureOf(refused(s)({ id: 1 } as never, 0))])
    );
    expect(seen).toEqual({
      lab: { kind: 'denied', reason: 'user.denied', retryable: false },
      spec: { kind: 'error', what: 'unknown' },
      vscode: { kind: 'error', what: 'connection_closed' },
      inspector: { kind: 'error', what: 'provider_error' },
      'python-default': { kind: 'error', what: 'unknown' },
      cursor: { kind: 'error', what: 'unknown' }
    });
  });
});

describe('a well-behaved server, refused by the user in each style', () => {
  it('lab: one request, then it degrades deliberately and says so', () => {
    const run = fakeRun(spec('well-behaved'), refused('lab'));
    run.run(60_000);
    expect(run.sent).toHaveLength(1);
    expect(last(run, 'task.abandoned')!.why).toBe(
      'denied (user.denied, permanent): degraded, told the user'
    );
  });

  it('vscode (-32000): takes the refusal for a closed connection, reconnects, asks again', () => {
    const run = fakeRun(spec('well-behaved'), refused('vscode'));
    run.run(60_000);
    // Sent at 0, refused at 10: disconnects, reconnects 300 ms later, retries after its backoff.
    expect(run.log).toEqual([
      'disconnect@10',
      `connect@${10 + CLOSED_RECONNECT_MS}`,
      'disconnect@1020',
      `connect@${1020 + CLOSED_RECONNECT_MS}`
    ]);
    expect(run.sent.map((r) => [r.at, r.connection])).toEqual([
      [0, 1],
      [1010, 2]
    ]);
    expect(kinds(run)).toEqual([
      'task.started',
      'reconnect',
      'retry',
      'task.abandoned',
      'reconnect'
    ]);
    expect(last(run, 'task.abandoned')!.why).toBe('connection closed; gave up after 1 retry');
  });

  it('inspector (-32603): a transient failure, retried once after its backoff', () => {
    const run = fakeRun(spec('well-behaved'), refused('inspector'));
    run.run(60_000);
    expect(run.sent.map((r) => r.at)).toEqual([0, 1010]);
    expect(run.log).toEqual([]);
    expect(last(run, 'task.abandoned')!.why).toBe('provider error; gave up after 1 retry');
  });

  it.each(['spec', 'python-default', 'cursor'] as const)(
    '%s: a code it cannot interpret, retried once as the ambiguous failure it is',
    (style) => {
      const run = fakeRun(spec('well-behaved'), refused(style));
      run.run(60_000);
      expect(run.sent).toHaveLength(2);
      expect(last(run, 'task.abandoned')!.why).toBe('unknown; gave up after 1 retry');
    }
  );

  it('a later completion is used as always (the style changes refusals only)', () => {
    const run = fakeRun(spec('well-behaved'), (r, i) =>
      i === 0 ? refused('vscode')(r, i) : resultFrame(r.id, { model: 'm', text: 'done' })
    );
    run.run(60_000);
    expect(kinds(run)).toEqual(['task.started', 'reconnect', 'retry', 'task.completed']);
  });
});

describe('a naive retrier against a vscode-style lane', () => {
  it('reconnects before every retry: each refusal looks like a dropped connection', () => {
    const run = fakeRun(spec('naive-retrier', { params: { jitter: 0 } }), refused('vscode'));
    run.run(600_000);
    expect(run.sent).toHaveLength(6);
    expect(new Set(run.sent.map((r) => r.connection)).size).toBe(6);
    expect(kinds(run).filter((k) => k === 'reconnect')).toHaveLength(6);
  });
});
