/**
 * Monaco, set up for policy JSON: the editor core and its features, the JSON language with the
 * policy schema (completion and hovers from its descriptions), and the two
 * workers (`?worker`, bundled by Vite). Never import this module statically (`import type` is
 * fine): `loadMonaco()` in `policy-editor.ts` imports it with `import('./monaco')` when an
 * editor first opens, so Monaco is one lazy chunk plus its workers and nothing of it is in the
 * first-load JS. Everything is imported here statically so the bundler keeps it together: one
 * dynamic import per part made some ninety small chunks.
 *
 * Import paths: since monaco-editor 0.56 the package has an `exports` map (`"./*": "./esm/vs/*.js"`),
 * so the old deep paths (`monaco-editor/esm/vs/editor/editor.api`) resolve to `esm/vs/esm/vs/…` and
 * fail. The supported entry points are `monaco-editor/editor` (the core, no optional features, no
 * languages), `monaco-editor/features/<name>/register` and
 * `monaco-editor/languages/features/json/register` (which exports `jsonDefaults`; since 0.55 it is
 * no longer reachable as `monaco.languages.json`).
 */
import * as monaco from 'monaco-editor/editor';
import { jsonDefaults } from 'monaco-editor/languages/features/json/register';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import JsonWorker from 'monaco-editor/languages/features/json/json.worker?worker';
// Every editor contribution (suggest widget, hover, find, folding, Ctrl+M tab focus…), registered
// now. The JSON language's worker manager imports this module anyway, but only when its mode loads
// lazily, after the first editor exists: contributions registered then reach only later editors,
// so lane A's editor had no completion and lane B's did. (The public `features/*/register` entry
// points of 0.57 cannot stand in for it: none of them registers the suggest widget.)
import 'monaco-editor/internal/common/workers';
import { policyJsonSchema } from '$lib/machine/policy';

export type Monaco = typeof monaco;
export type MonacoModule = typeof import('./monaco');

/** The URI the policy schema is registered under (an identifier; never fetched). */
export const POLICY_SCHEMA_URI = 'https://sampling-policy-lab.invalid/schemas/policy.json';

/** Matches every lane's model URI: the language service prefixes a pattern with a globstar. */
const POLICY_FILE_MATCH = 'policy-lane-*.json';

/** The model URI of a lane's policy; the schema is associated with it by `POLICY_FILE_MATCH`. */
export function policyModelUri(lane: string): string {
  return `inmemory://sampling-policy-lab/policy-lane-${lane}.json`;
}

self.MonacoEnvironment = {
  getWorker: (_workerId: string, label: string) =>
    label === 'json' ? new JsonWorker() : new EditorWorker()
};

jsonDefaults.setDiagnosticsOptions({
  validate: true,
  allowComments: false,
  comments: 'error',
  trailingCommas: 'error',
  enableSchemaRequest: false,
  // Red (error) markers are `parsePolicy`'s: they are what blocks Apply. The schema's own
  // findings are warnings, so the colour tells the learner what stands in the way.
  schemaValidation: 'warning',
  schemas: [{ uri: POLICY_SCHEMA_URI, fileMatch: [POLICY_FILE_MATCH], schema: policyJsonSchema() }]
});

export { monaco };

/** Monaco's built-in theme for the current colour scheme. */
export function monacoTheme(dark: boolean): 'vs' | 'vs-dark' {
  return dark ? 'vs-dark' : 'vs';
}

export interface PolicyEditorOptions {
  lane: string;
  /** The draft the editor opens with. */
  text: string;
  /** The editor's accessible name. */
  label: string;
  dark: boolean;
  /** Every change of the text. */
  onChange: (text: string) => void;
  /** Ctrl/Cmd+Enter in this editor. */
  onApply: () => void;
}

/** A lane's policy editor on `host`, with its model; `dispose` removes both. */
export function createPolicyEditor(host: HTMLElement, o: PolicyEditorOptions) {
  const uri = monaco.Uri.parse(policyModelUri(o.lane));
  monaco.editor.getModel(uri)?.dispose();
  const model = monaco.editor.createModel(o.text, 'json', uri);
  const editor = monaco.editor.create(host, {
    model,
    ariaLabel: o.label,
    theme: monacoTheme(o.dark),
    automaticLayout: true,
    fixedOverflowWidgets: true,
    minimap: { enabled: false },
    // The lane columns can be narrow: a slim gutter, wrapped lines indented under their member.
    stickyScroll: { enabled: false },
    scrollBeyondLastLine: false,
    lineNumbersMinChars: 2,
    lineDecorationsWidth: 6,
    hideCursorInOverviewRuler: true,
    tabSize: 2,
    fontSize: host.clientWidth < 420 ? 12 : 13,
    wordWrap: 'on',
    wrappingIndent: 'indent',
    quickSuggestions: { strings: true, other: true, comments: false }
  });
  const sub = model.onDidChangeContent(() => o.onChange(model.getValue()));
  // An action, not `addCommand`: commands are global to all editors, so with both lanes open
  // Ctrl+Enter would apply the other lane's draft.
  const action = editor.addAction({
    id: `policy.apply.${o.lane}`,
    label: `Apply the policy to lane ${o.lane}`,
    keybindings: [monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter],
    run: () => o.onApply()
  });
  return {
    editor,
    model,
    dispose(): void {
      action.dispose();
      sub.dispose();
      editor.dispose();
      model.dispose();
    }
  };
}

/**
 * The draft against the policy in force, before Apply (issue #24): Monaco's diff editor, read
 * only, side by side when there is room. `update` shows a new draft; `dispose` removes it all.
 */
export function createPolicyDiff(
  host: HTMLElement,
  o: { inForce: string; draft: string; dark: boolean; label: string }
) {
  const original = monaco.editor.createModel(o.inForce, 'json');
  const modified = monaco.editor.createModel(o.draft, 'json');
  const diff = monaco.editor.createDiffEditor(host, {
    theme: monacoTheme(o.dark),
    automaticLayout: true,
    readOnly: true,
    originalEditable: false,
    renderSideBySide: host.clientWidth >= 640,
    minimap: { enabled: false },
    scrollBeyondLastLine: false,
    wordWrap: 'on',
    ariaLabel: o.label,
    originalAriaLabel: `${o.label}: the policy in force`,
    modifiedAriaLabel: `${o.label}: the draft`
  });
  diff.setModel({ original, modified });
  return {
    update(inForce: string, draft: string): void {
      if (original.getValue() !== inForce) original.setValue(inForce);
      if (modified.getValue() !== draft) modified.setValue(draft);
    },
    /** How many changed blocks the diff shows (null until it has computed them). */
    changes(): number | null {
      return diff.getLineChanges()?.length ?? null;
    },
    dispose(): void {
      diff.dispose();
      original.dispose();
      modified.dispose();
    }
  };
}
