/**
 * The statechart the pages draw (Statechart.svelte): the authorisation machine's graph, what each
 * terminal state sends, laid out once. Its own module so that a test can check the size the
 * playground reserves for it before its code arrives (statechart-box.ts).
 */
import { CODES } from '../machine/types';
import { authorizationFlow } from '../machine/authorize/flow';
import { flowGraph } from './flow-graph';
import { layoutGraph } from './statechart-layout';

/** What each terminal state sends: the server's whole view of the request. */
export const STATECHART_NOTES: Record<string, string> = {
  sent: `one frame: result / ${CODES.denied} / ${CODES.requestTimeout} / ${CODES.internal}`,
  silenced: 'no frame (silence)'
};

/** Read from the flow description (flow-graph.ts): the page loads neither XState nor the machine. */
export const STATECHART_GRAPH = flowGraph(authorizationFlow);
export const STATECHART_LAYOUT = layoutGraph(STATECHART_GRAPH, { notes: STATECHART_NOTES });
