/**
 * The refusal matrix's rows and how they read (issue #25, "Same refusal, six codes"), apart from
 * the code that runs them (refusal-matrix.ts, which needs the engine): the lesson page imports
 * this to draw the table and fill its text, and the lesson parser to check a template, without
 * loading the simulation into the page (it runs in a worker).
 *
 * A lesson's matrix text quotes a cell as `{STYLE.COLUMN}`: `{vscode.reconnects}`,
 * `{lab.spendMicros}`, `{python-default.code}` — the row of that refusal style, the column by its
 * field name. No number is typed into the text: the page fills it from the matrix it computed.
 */
import { DENIAL_STYLES, type DenialStyle } from '../../machine/denial-styles';
import { fromMicros } from '../../machine/money';

export interface MatrixRow {
  style: DenialStyle;
  /** The JSON-RPC code the style refuses with. */
  code: number;
  /** Who refuses this way. */
  client: string;
  requests: number;
  refusals: number;
  retries: number;
  reconnects: number;
  consentPrompts: number;
  abandoned: number;
  completed: number;
  spendMicros: number;
}

/** The columns a template may quote, with how each reads in a sentence and as a table header. */
export const MATRIX_COLUMNS = [
  'code',
  'requests',
  'refusals',
  'retries',
  'reconnects',
  'consentPrompts',
  'abandoned',
  'completed',
  'spendMicros'
] as const satisfies readonly (keyof MatrixRow)[];
export type MatrixColumn = (typeof MATRIX_COLUMNS)[number];

export const MATRIX_LABELS: Record<MatrixColumn, string> = {
  code: 'Code',
  requests: 'Requests',
  refusals: 'Refusals',
  retries: 'Retries',
  reconnects: 'Reconnects',
  consentPrompts: 'Prompts',
  abandoned: 'Abandoned',
  completed: 'Completed',
  spendMicros: 'Spend'
};

const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * One cell as the page and the text show it: spend in dollars to four decimals (`lab styles`
 * prints the same digits without the `$`), a code as the signed integer it is, counts with commas.
 */
export function formatCell(row: MatrixRow, column: MatrixColumn): string {
  if (column === 'spendMicros') return `$${fromMicros(row.spendMicros)}`;
  if (column === 'code') return String(row.code);
  return count.format(row[column]);
}

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** What `{…}` names: a style's row and a column, or why it cannot. */
function parseRef(ref: string): { style: DenialStyle; column: MatrixColumn } | string {
  const dot = ref.lastIndexOf('.');
  const style = ref.slice(0, dot);
  const column = ref.slice(dot + 1);
  if (dot < 0 || !(DENIAL_STYLES as readonly string[]).includes(style))
    return `write {STYLE.COLUMN}, STYLE one of ${DENIAL_STYLES.join(', ')}`;
  if (!(MATRIX_COLUMNS as readonly string[]).includes(column))
    return `the matrix has no column ${JSON.stringify(column)}; its columns: ${MATRIX_COLUMNS.join(', ')}`;
  return { style: style as DenialStyle, column: column as MatrixColumn };
}

/** Every placeholder of `template` the matrix cannot fill (as written), with why. */
export function matrixTemplateErrors(template: string): { placeholder: string; why: string }[] {
  const out: { placeholder: string; why: string }[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const r = parseRef(m[1]!);
    if (typeof r === 'string') out.push({ placeholder: m[0], why: r });
  }
  return out;
}

/** Fill `{STYLE.COLUMN}` from the matrix's rows; a placeholder it cannot fill stays as written. */
export function fillMatrixTemplate(template: string, rows: readonly MatrixRow[]): string {
  return template.replace(PLACEHOLDER, (whole, ref: string) => {
    const r = parseRef(ref);
    if (typeof r === 'string') return whole;
    const row = rows.find((x) => x.style === r.style);
    return row ? formatCell(row, r.column) : whole;
  });
}
