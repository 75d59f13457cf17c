/**
 * Live play and the fast-forward pump, as one part of the worker fetched on first use
 * (commands.ts: loadPlay): the first load is ready to play without them, and the first Play or
 * fast-forward waits for the parsers anyway (issue #24).
 */
export { handleLive, playing, stopLive } from './live-play';
export { fastForwardAnswers, startPump } from './fast-forward';
