/**
 * The ready-made sweeps (static/sweeps/*.json), bundled into the Sweep view as text (the page
 * parses them strictly, as any dropped file). Their scenarios are fetched when one is picked.
 */
const FILES = import.meta.glob<string>('/static/sweeps/*.json', {
  eager: true,
  query: '?raw',
  import: 'default'
});

export interface ReadySweep {
  name: string;
  title: string;
  text: string;
}

/** By file name; the title is read from the file (its name when it has none). */
export const READY_SWEEPS: ReadySweep[] = Object.entries(FILES)
  .map(([file, text]) => {
    const name = file.replace(/^.*\/(.+)\.json$/, '$1');
    let title = name;
    try {
      const t = (JSON.parse(text) as { title?: unknown }).title;
      if (typeof t === 'string') title = t;
    } catch {
      // The view parses the file itself when picked, and shows the error there.
    }
    return { name, title, text };
  })
  .sort((a, b) => a.name.localeCompare(b.name));
