/**
 * How a lane refuses (issue #25): the lab's typed denial, or exactly what a real client sends.
 *
 * The lab refuses with `-32003` and `data: { reason, server, retryable, … }` — the one frame a
 * server can branch on. The clients servers meet in the field send other codes, with a message and
 * no `data`, and the server's SDK shows it only those (an `McpError` with a code and a message).
 * A lane's `denialStyle` picks one of them; the decision, its store entry and the audit record are
 * the lab's as always (the client knows its reason), only the frame the server receives changes.
 *
 * The codes are the JSON-RPC / MCP SDK values (`ErrorCode` in `@modelcontextprotocol/sdk`;
 * refusal-styles.spec.ts checks them against the SDK so this file needs no import of it).
 */
import type { ErrorFrame, Frame } from './types';
import { DENIAL_STYLES, type DenialStyle } from './denial-styles';

export { DENIAL_STYLES, type DenialStyle };

/** A real client's refusal: the code and message it sends, and no `data`. */
export interface ForeignRefusal {
  readonly code: number;
  readonly message: string;
  /** Who sends it, for labels and the README. */
  readonly client: string;
  /** What the server's SDK makes of the code, in words. */
  readonly serverSees: string;
}

/** Every style but the lab's, exactly as that client sends it. */
export const FOREIGN_REFUSALS: Readonly<Record<Exclude<DenialStyle, 'lab'>, ForeignRefusal>> = {
  spec: {
    code: -1,
    message: 'User rejected sampling request',
    client: 'the MCP specification (2025-11-25)',
    serverSees: 'an unknown error code'
  },
  vscode: {
    code: -32000,
    message: 'The user has denied permission to call this method.',
    client: 'VS Code',
    serverSees: 'ConnectionClosed: the SDK’s own code for a dropped connection'
  },
  inspector: {
    code: -32603,
    message: 'Sampling request rejected',
    client: 'MCP Inspector, Goose',
    serverSees: 'InternalError: a transient failure'
  },
  'python-default': {
    code: -32600,
    message: 'Sampling not supported',
    client: "the Python SDK's default sampling callback",
    serverSees: 'InvalidRequest'
  },
  cursor: {
    code: -32601,
    message: 'Method not found',
    client: 'Cursor',
    serverSees: 'MethodNotFound'
  }
};

/** The lab's denial code: a refusal by policy or by the user. */
const LAB_DENIAL = -32003;

/**
 * The frame a lane with `style` sends in place of `frame`: a lab denial (`-32003`, a cost refusal
 * sent as an error included) becomes that client's refusal, with the same `id`; every other frame
 * (results, transport and provider errors) is sent as it is.
 */
export function styleFrame(frame: Frame, style: DenialStyle): Frame;
export function styleFrame(frame: Frame | null, style: DenialStyle): Frame | null;
export function styleFrame(frame: Frame | null, style: DenialStyle): Frame | null {
  if (style === 'lab' || frame === null || !('error' in frame)) return frame;
  if (frame.error.code !== LAB_DENIAL) return frame;
  const r = FOREIGN_REFUSALS[style];
  const out: ErrorFrame = {
    jsonrpc: '2.0',
    id: frame.id,
    error: { code: r.code, message: r.message }
  };
  return out;
}
