/**
 * The lesson page's refusal matrix (issue #25), off the main thread as a sweep's runs are: the
 * same `refusalMatrix` `lab styles` calls, on the scenario the lesson loaded, one row posted as
 * each style's run finishes, then the whole matrix (or the scenario's first error).
 */
import { refusalMatrix } from '../../sim/report/refusal-matrix';
import type { MatrixIn, MatrixOut } from './matrix-protocol';

function post(m: MatrixOut): void {
  postMessage(m);
}

onmessage = (e: MessageEvent<MatrixIn>) => {
  try {
    const r = refusalMatrix(e.data.scenario, e.data.lane, (_row, index) =>
      post({ type: 'row', index })
    );
    if (r.ok) post({ type: 'done', rows: r.rows });
    else post({ type: 'error', message: `${r.errors[0]!.path}: ${r.errors[0]!.message}` });
  } catch (err) {
    post({ type: 'error', message: (err as Error).message });
  }
};
