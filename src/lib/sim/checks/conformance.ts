/**
 * Frame conformance against the official MCP SDK schemas (SPEC §10): the reference every frame
 * the product emits is held to, in the tests, the CLI and the playground's worker alike.
 */
import {
  CreateMessageResultSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCResultResponseSchema
} from '@modelcontextprotocol/sdk/types.js';
import type { Frame } from '../../machine/types';
import { knownConformingFrame } from './fast-frames';
import type { FrameValidator } from './invariants';

function firstIssue(e: { issues: { path: PropertyKey[]; message: string }[] }): string {
  const i = e.issues[0];
  return i ? `${i.path.map(String).join('.') || '(frame)'}: ${i.message}` : 'invalid';
}

/**
 * What is wrong with `frame` by the SDK's schemas, or null when it conforms. A frame of a shape
 * the product emits is accepted without zod (fast-frames.ts); everything else is zod's to judge.
 */
export const sdkFrameProblem: FrameValidator = (frame: Frame) => {
  if (knownConformingFrame(frame)) return null;
  return zodFrameProblem(frame);
};

/** What is wrong with `frame` by the SDK's zod schemas alone, or null when it conforms. */
export const zodFrameProblem: FrameValidator = (frame: Frame) => {
  if ('result' in frame) {
    const env = JSONRPCResultResponseSchema.safeParse(frame);
    if (!env.success) return `not a JSON-RPC result: ${firstIssue(env.error)}`;
    const res = CreateMessageResultSchema.safeParse(frame.result);
    if (!res.success) return `not a CreateMessageResult: ${firstIssue(res.error)}`;
    return null;
  }
  const err = JSONRPCErrorResponseSchema.safeParse(frame);
  return err.success ? null : `not a JSON-RPC error: ${firstIssue(err.error)}`;
};
