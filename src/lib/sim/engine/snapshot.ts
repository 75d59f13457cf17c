/**
 * Snapshots that outlive the page (issue #21): a running engine — the object graph the copier
 * copies (machine/clone.ts) — as a plain value that `structuredClone`, IndexedDB and
 * `v8.serialize` accept, and back into objects that continue exactly as the original would.
 *
 * What the structured clone algorithm keeps by itself is used as it is: arrays, plain records,
 * Maps, Sets, typed arrays, shared references and cycles. What it loses is made explicit:
 * - an instance of a class becomes a tagged record `{ [CLASS]: name, ...fields }`, its class
 *   found again by that name in the registry (snapshot-registry.ts), and rebuilt without its
 *   constructor (`Object.create(prototype)` + its fields) — so a class with `#private` members,
 *   which such an object would fail the brand check of, is refused when registered;
 * - a frozen shared constant (a marker compared with `===`) registered by name becomes
 *   `{ [CONST]: name }` and is the same constant again after decoding;
 * - an immutable value the run's inputs hold (its scenario, policies, rate cards) may be named
 *   by the caller (`externals`): it is left out and re-attached on decoding;
 * - a function cannot be a snapshot: it throws {@link SnapshotError} naming the class and the
 *   path of the field, unless it is one of the caller's hooks (`hooks`: stored by name and the
 *   new run's hook of that name attached instead) or the class's rules drop the field (and
 *   re-make it when revived).
 *
 * A WeakSet or WeakMap is decoded empty: nothing can list what it holds, so nothing can rely on
 * it for more than a cache: an empty one after decoding must change nothing a run reports.
 *
 * The walk is iterative (a work list, not recursion): a long chain of objects cannot overflow the
 * stack.
 *
 * Over 400 lines on purpose: encoding and decoding are one format — each tag written here is read
 * back a few lines from where it is written, and the two walks share the id table.
 */

/**
 * The snapshot format; a snapshot with another version is refused (and re-simulated instead).
 * Raised whenever the names a snapshot stores change, or the shape of what a class holds. 2:
 * classes are named by their copy rules (machine/clone.ts), no longer by where a probe run first
 * met them. 3: a client host's reservations are an array, no longer a Map. 4: its presentation
 * history is keyed by the identity alone. 5: its flights are keyed by identity and its leaders by
 * connection then id, and an identity presented once holds its time as a number. 6: the virtual
 * clock's pending timers by id are a `clock.TimerTable`, no longer a Map. 7: the run's invariant
 * checks key their requests in flight and presentation times by lane, then connection and id (or
 * identity), and a request in flight holds its place in the arrival order. 8: a simulated
 * server's pending requests, timeouts and tasks are `clock.TimerTable`s too, and a lane's requests
 * in flight are keyed by a number it gives each, no longer by a string of their connection and id.
 * 9: the invariant guard keeps no requests in flight of its own: the limits and params a request
 * arrived under are in the checker's entry for it, which stays until its audit record when its
 * frame came first.
 */
export const SNAPSHOT_VERSION = 9;

/** The tag of an encoded class instance; the field name never occurs in run state. */
export const CLASS = '\u0000class';
/** The tag of an encoded shared constant. */
export const CONST = '\u0000const';
/** The tag of an encoded external value (re-attached from the run's inputs). */
export const EXTERNAL = '\u0000external';
/** The tag of an encoded record without a prototype. */
const BARE = '\u0000bare';
/** The wrapper of a frozen array or record (frozen again when decoded). */
const FROZEN = '\u0000frozen';
/** The dropped fields an encoded instance had (its class's `revive` re-makes those only). */
const DROPPED = '\u0000dropped';
/** The tag of a weak collection (decoded empty). */
const WEAK = '\u0000weak';
/** The tag of a function that is one of the caller's hooks, by its name there. */
export const HOOK = '\u0000hook';

/** A snapshot cannot be made, or read back. */
export class SnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotError';
  }
}

/** What a registered class's instances need beyond their fields. */
export interface ClassRules<T extends object = object> {
  /** Fields left out of the snapshot (closures, hooks): `revive` puts them back. */
  drop?: readonly string[];
  /**
   * Called once the whole graph is decoded, in the order the objects were met: re-make what was
   * dropped. `context` is the caller's (decode's `context`); `had(o, field)` says whether the
   * original of decoded object `o` had the dropped `field` (a version of the class without it
   * must not be given one).
   */
  revive?: (obj: T, context: unknown, had: (o: object, field: string) => boolean) => void;
  /**
   * Make the instance instead of `Object.create(prototype)` (its fields are then assigned over
   * it): for a class whose constructor makes closures over `this`. `field` gives the decoded
   * object a field of the record will hold (made now, filled later).
   */
  make?: (field: (name: string) => unknown) => T;
  /**
   * Why this object cannot be stored now, or nothing when it can: asked when the encoder meets it,
   * a reason throws {@link SnapshotError} with it (the engine's: the copy rules' own reasons).
   */
  refuse?: (obj: T) => string | null | undefined;
}

interface Entry {
  name: string;
  proto: object;
  drop: ReadonlySet<string>;
  revive:
    ((obj: object, context: unknown, had: (o: object, f: string) => boolean) => void) | undefined;
  make: ((field: (name: string) => unknown) => object) | undefined;
  refuse: ((obj: object) => string | null | undefined) | undefined;
}

/**
 * The classes and constants a snapshot may hold, by name (snapshot-registry.ts builds the
 * engine's, from the classes' copy rules). Names are what a snapshot stores: renaming a class
 * keeps its name.
 */
export class SnapshotRegistry {
  readonly #byProto = new Map<object, Entry>();
  readonly #byName = new Map<string, Entry>();
  readonly #constants = new Map<object, string>();
  readonly #constantsByName = new Map<string, object>();

  /** Register `cls` under `name`. Refuses a class whose instances keep `#private` state. */
  add<T extends object>(
    name: string,
    cls: abstract new (...args: never[]) => T,
    rules: ClassRules<T> = {}
  ): this {
    if (this.#byName.has(name)) throw new SnapshotError(`two classes registered as '${name}'`);
    const hidden = privateMembers(cls);
    if (hidden)
      throw new SnapshotError(
        `class ${name} keeps #private state (${hidden}): a snapshot cannot read it, nor a rebuilt instance pass its brand check — make it a TypeScript private field`
      );
    const e: Entry = {
      name,
      proto: cls.prototype as object,
      drop: new Set(rules.drop ?? []),
      revive: rules.revive as Entry['revive'],
      make: rules.make as Entry['make'],
      refuse: rules.refuse as Entry['refuse']
    };
    this.#byProto.set(e.proto, e);
    this.#byName.set(name, e);
    return this;
  }

  /**
   * Register every object reachable from `root` (not through functions) as a constant named by
   * its path: a structure built once per program and shared by everything that points into it
   * (a transition table and its states).
   */
  constantGraph(prefix: string, root: object): this {
    const seen = new Set<object>();
    const work: [object, string][] = [[root, prefix]];
    for (let i = 0; i < work.length; i++) {
      const [o, path] = work[i]!;
      if (seen.has(o) || this.#constants.has(o)) continue;
      seen.add(o);
      this.constant(path, o);
      const at = (v: unknown, k: string) => {
        if (typeof v === 'object' && v !== null) work.push([v, `${path}${k}`]);
      };
      if (o instanceof Map) {
        let j = 0;
        for (const [k, v] of o) {
          at(k, `.key(${j})`);
          at(v, `.get(${typeof k === 'string' ? k : j})`);
          j++;
        }
      } else if (o instanceof Set) {
        let j = 0;
        for (const v of o) at(v, `.values(${j++})`);
      } else for (const k of Object.keys(o)) at((o as Rec)[k], `.${k}`);
    }
    return this;
  }

  /** Register a shared constant (frozen, compared by identity) under `name`. */
  constant(name: string, value: object): this {
    if (this.#constantsByName.has(name))
      throw new SnapshotError(`two constants registered as '${name}'`);
    this.#constants.set(value, name);
    this.#constantsByName.set(name, value);
    return this;
  }

  entryOf(proto: object): Entry | undefined {
    return this.#byProto.get(proto);
  }
  entryNamed(name: string): Entry | undefined {
    return this.#byName.get(name);
  }
  constantName(value: object): string | undefined {
    return this.#constants.get(value);
  }
  constantNamed(name: string): object | undefined {
    return this.#constantsByName.get(name);
  }
}

/**
 * The `#private` members a class (or a class it extends) declares, as its source shows them, or
 * ''. Native `#x` fields and methods appear in the class's text; down-levelled ones as helpers.
 */
function privateMembers(cls: abstract new (...args: never[]) => unknown): string {
  const found = new Set<string>();
  for (let c: unknown = cls; typeof c === 'function' && c !== Function.prototype;) {
    const text = Function.prototype.toString.call(c);
    for (const m of text.matchAll(
      /(?:this|\w|\)|\])\.#([A-Za-z_][\w$]*)|#([A-Za-z_][\w$]*)\s+in\b/g
    ))
      found.add(`#${m[1] ?? m[2]}`);
    if (/__private(Get|Add|Set|Method)/.test(text)) found.add('down-levelled #private');
    c = Object.getPrototypeOf(c);
  }
  return [...found].slice(0, 4).join(', ');
}

/** An encoded run state: plain values only. */
export interface Snapshot<Meta = unknown> {
  version: number;
  /** What the caller keeps beside (the run's position, its counts). */
  meta: Meta;
  root: unknown;
}

export interface EncodeOptions {
  /** Immutable values left out, by name (decode gets them back by the same names). */
  externals?: ReadonlyMap<object, string>;
  /** The run's hooks, by name: a field holding one is stored as its name. */
  hooks?: Readonly<Record<string, unknown>>;
  /**
   * What to store instead of an object of a class the registry does not know (a store the page
   * keeps in IndexedDB, say: its decisions in memory), or undefined to refuse it. `same` pairs
   * objects it holds with the ones the replacement holds instead (shared elsewhere too).
   */
  substitute?: (obj: object) => { value: object; same?: [object, object][] } | undefined;
}

export interface DecodeOptions {
  externals?: ReadonlyMap<string, object>;
}

/** Decoded objects waiting for their hooks and revivers ({@link Decoded.attach}). */
export interface Decoded<T> {
  value: T;
  /** Put the run's `hooks` where the snapshot named them, then run each class's `revive`. */
  attach(hooks: Readonly<Record<string, unknown>>, context?: unknown): T;
}

/** Where a value sits, for an error message (made only when one is thrown). */
interface Place {
  parent: Place | null;
  key: string;
  /** The class whose field this is, when the holder is an instance. */
  owner: string | null;
}

function pathOf(p: Place | null): string {
  const parts: string[] = [];
  for (let q = p; q; q = q.parent) parts.push(q.key);
  return parts.reverse().join('') || '(root)';
}

function ownerOf(p: Place | null): string {
  for (let q = p; q; q = q.parent) if (q.owner) return `class ${q.owner}`;
  return 'the root';
}

type Rec = Record<string, unknown>;

/** Turn `root` into a {@link Snapshot}: nothing in it is a class instance or a function. */
export function encode<Meta>(
  registry: SnapshotRegistry,
  root: unknown,
  meta: Meta,
  opts: EncodeOptions = {}
): Snapshot<Meta> {
  const externals = opts.externals ?? new Map<object, string>();
  const hooks = new Map<unknown, string>();
  for (const [k, f] of Object.entries(opts.hooks ?? {}))
    if (typeof f === 'function' && !hooks.has(f)) hooks.set(f, k);
  const done = new Map<object, unknown>();
  const work: { from: object; to: object; at: Place | null; entry: Entry | null }[] = [];

  const value = (v: unknown, at: Place | null): unknown => {
    if (typeof v === 'function' && hooks.has(v)) return { [HOOK]: hooks.get(v) };
    if (typeof v === 'function')
      throw new SnapshotError(
        `${ownerOf(at)} holds a function at ${pathOf(at)} (${(v as { name?: string }).name || 'anonymous'}): a snapshot holds data only — drop the field in its snapshot rules and re-make it when revived`
      );
    if (typeof v === 'symbol')
      throw new SnapshotError(`${ownerOf(at)} holds a symbol at ${pathOf(at)}`);
    if (typeof v !== 'object' || v === null) return v;
    const seen = done.get(v);
    if (seen !== undefined) return seen;
    const ext = externals.get(v);
    if (ext !== undefined) return remember(v, { [EXTERNAL]: ext });
    const constant = registry.constantName(v);
    if (constant !== undefined) return remember(v, { [CONST]: constant });
    const proto = Object.getPrototypeOf(v) as object | null;
    if (Object.isFrozen(v) && (proto === Array.prototype || proto === Object.prototype)) {
      // Frozen, but not a registered constant: its contents, frozen again on decoding.
      const box: Rec = {};
      done.set(v, box);
      box[FROZEN] = later(
        v,
        proto === Array.prototype ? new Array((v as unknown[]).length) : {},
        at,
        null
      );
      return box;
    }
    if (proto === Array.prototype) return later(v, new Array((v as unknown[]).length), at, null);
    if (proto === Object.prototype) return later(v, {}, at, null);
    if (proto === Map.prototype) return later(v, new Map(), at, null);
    if (proto === Set.prototype) return later(v, new Set(), at, null);
    if (proto === null) return later(v, { [BARE]: true }, at, null);
    if (ArrayBuffer.isView(v)) return remember(v, (v as unknown as Uint8Array).slice());
    if (v instanceof WeakSet || v instanceof WeakMap)
      return remember(v, { [WEAK]: v instanceof WeakSet ? 'set' : 'map' });
    const entry = registry.entryOf(proto);
    const sub = entry ? undefined : opts.substitute?.(v);
    if (sub) {
      const to = value(sub.value, at);
      done.set(v, to);
      for (const [a, b] of sub.same ?? []) done.set(a, value(b, at));
      return to;
    }
    if (!entry) {
      const name = (v as { constructor?: { name?: string } }).constructor?.name ?? '?';
      throw new SnapshotError(
        `${ownerOf(at)} holds an instance of class ${name} at ${pathOf(at)}, which is not registered for snapshots (snapshot-registry.ts)`
      );
    }
    const why = entry.refuse?.(v);
    if (why) throw new SnapshotError(`cannot save the run: ${why}`);
    return later(v, { [CLASS]: entry.name }, at, entry);
  };
  const remember = (from: object, to: unknown): unknown => {
    done.set(from, to);
    return to;
  };
  const later = (from: object, to: object, at: Place | null, entry: Entry | null): unknown => {
    done.set(from, to);
    work.push({ from, to, at, entry });
    return to;
  };

  const out = value(root, null);
  for (let i = 0; i < work.length; i++) {
    const { from, to, at, entry } = work[i]!;
    if (Array.isArray(from)) {
      const a = to as unknown[];
      for (let j = 0; j < from.length; j++) {
        const e = from[j] as unknown;
        a[j] =
          typeof e === 'object' || typeof e === 'function'
            ? value(e, { parent: at, key: `[${j}]`, owner: null })
            : e;
      }
    } else if (from instanceof Map) {
      const m = to as Map<unknown, unknown>;
      let j = 0;
      for (const [k, e] of from) {
        const here: Place = { parent: at, key: `.get(#${j++})`, owner: null };
        m.set(value(k, here), value(e, here));
      }
    } else if (from instanceof Set) {
      const s = to as Set<unknown>;
      let j = 0;
      for (const e of from) s.add(value(e, { parent: at, key: `.values()[${j++}]`, owner: null }));
    } else {
      const r = to as Rec;
      const f = from as Rec;
      let dropped: string[] | null = null;
      for (const k of Object.keys(f)) {
        if (entry?.drop.has(k)) {
          (dropped ??= []).push(k);
          continue;
        }
        if (
          k === CLASS ||
          k === CONST ||
          k === EXTERNAL ||
          k === BARE ||
          k === FROZEN ||
          k === HOOK ||
          k === WEAK ||
          k === DROPPED
        )
          throw new SnapshotError(`a record at ${pathOf(at)} has a reserved field name`);
        const e = f[k];
        r[k] =
          typeof e === 'object' || typeof e === 'function'
            ? value(e, { parent: at, key: `.${k}`, owner: entry?.name ?? null })
            : e;
      }
      if (dropped) r[DROPPED] = dropped;
    }
  }
  return { version: SNAPSHOT_VERSION, meta, root: out };
}

/**
 * The objects a {@link Snapshot} was made from, rebuilt: class instances with their prototypes,
 * constants and externals the very values registered, then each class's `revive` run. Throws
 * {@link SnapshotError} for another version, an unknown class or constant, or a damaged record.
 */
export function decode<T = unknown>(
  registry: SnapshotRegistry,
  snapshot: Snapshot,
  opts: DecodeOptions & { hooks?: Readonly<Record<string, unknown>>; context?: unknown } = {}
): T {
  return decodeLater<T>(registry, snapshot, opts).attach(opts.hooks ?? {}, opts.context);
}

/**
 * {@link decode} in two steps: the objects first, then (`attach`) the hooks and revivers — for a
 * caller whose hooks are made by decoded objects (an invariant guard's, say).
 */
export function decodeLater<T = unknown>(
  registry: SnapshotRegistry,
  snapshot: Snapshot,
  opts: DecodeOptions = {}
): Decoded<T> {
  if (!snapshot || typeof snapshot !== 'object')
    throw new SnapshotError('not a snapshot: ' + typeof snapshot);
  if (snapshot.version !== SNAPSHOT_VERSION)
    throw new SnapshotError(
      `snapshot version ${String(snapshot.version)}; this build reads version ${SNAPSHOT_VERSION}`
    );
  const externals = opts.externals ?? new Map<string, object>();
  const done = new Map<object, unknown>();
  const work: { from: object; to: object; entry: Entry | null; bare: boolean }[] = [];
  const revive: { obj: object; entry: Entry }[] = [];
  const frozen: object[] = [];
  /** Where a hook goes: holder, key, the hook's name. */
  const hooked: [Rec | unknown[], string | number, string][] = [];
  /** The dropped fields each decoded instance's original had. */
  const had = new WeakMap<object, readonly string[]>();

  const value = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const seen = done.get(v);
    if (seen !== undefined) return seen;
    const proto = Object.getPrototypeOf(v) as object | null;
    if (proto === Array.prototype) return later(v, new Array((v as unknown[]).length), null);
    if (proto === Map.prototype) return later(v, new Map(), null);
    if (proto === Set.prototype) return later(v, new Set(), null);
    // A copy: two runs restored from one snapshot must not share a table's keys (timer-table.ts).
    if (ArrayBuffer.isView(v)) return remember(v, (v as unknown as Uint8Array).slice());
    if (proto !== Object.prototype)
      throw new SnapshotError(`a snapshot holds an object of an unexpected kind`);
    const r = v as Rec;
    if (CLASS in r) {
      const entry = registry.entryNamed(String(r[CLASS]));
      if (!entry)
        throw new SnapshotError(`the snapshot names class '${String(r[CLASS])}', unknown here`);
      if (entry.make) {
        const obj = entry.make((name) => value(r[name]));
        done.set(v, obj);
        work.push({ from: v, to: obj, entry, bare: false });
        if (entry.revive) revive.push({ obj, entry });
        return obj;
      }
      const obj = Object.create(entry.proto) as object;
      if (entry.revive) revive.push({ obj, entry });
      return later(v, obj, entry);
    }
    if (CONST in r) {
      const c = registry.constantNamed(String(r[CONST]));
      if (!c)
        throw new SnapshotError(`the snapshot names constant '${String(r[CONST])}', unknown here`);
      return remember(v, c);
    }
    if (EXTERNAL in r) {
      const x = externals.get(String(r[EXTERNAL]));
      if (!x)
        throw new SnapshotError(`the snapshot needs '${String(r[EXTERNAL])}', which was not given`);
      return remember(v, x);
    }
    if (WEAK in r) return remember(v, r[WEAK] === 'set' ? new WeakSet() : new WeakMap());
    if (HOOK in r) throw new SnapshotError('a hook where only a field may hold one');
    if (FROZEN in r) {
      const inner = value(r[FROZEN]) as object;
      frozen.push(inner);
      return remember(v, inner);
    }
    if (BARE in r) return later(v, Object.create(null) as object, null, true);
    return later(v, {}, null);
  };
  const remember = (from: object, to: unknown): unknown => {
    done.set(from, to);
    return to;
  };
  const later = (from: object, to: object, entry: Entry | null, bare = false): unknown => {
    done.set(from, to);
    work.push({ from, to, entry, bare });
    return to;
  };

  const out = value(snapshot.root) as T;
  for (let i = 0; i < work.length; i++) {
    const { from, to, entry, bare } = work[i]!;
    if (Array.isArray(from)) {
      const a = to as unknown[];
      for (let j = 0; j < from.length; j++) {
        const e = from[j] as unknown;
        if (isHook(e)) hooked.push([a, j, e[HOOK]]);
        else a[j] = typeof e === 'object' ? value(e) : e;
      }
    } else if (from instanceof Map) {
      for (const [k, e] of from) (to as Map<unknown, unknown>).set(value(k), value(e));
    } else if (from instanceof Set) {
      for (const e of from) (to as Set<unknown>).add(value(e));
    } else {
      const r = to as Rec;
      const f = from as Rec;
      for (const k of Object.keys(f)) {
        if ((entry && k === CLASS) || (bare && k === BARE)) continue;
        const e = f[k];
        if (entry && k === DROPPED) {
          if (Array.isArray(e)) had.set(to, e as string[]);
          continue;
        }
        if (isHook(e)) {
          r[k] = undefined; // keeps the field's place in the object's shape
          hooked.push([r, k, e[HOOK]]);
        } else r[k] = typeof e === 'object' ? value(e) : e;
      }
    }
  }
  for (const f of frozen) Object.freeze(f);
  return {
    value: out,
    attach(hooks, context) {
      for (const [holder, k, name] of hooked) (holder as Rec)[k as string] = hooks[name];
      const hadField = (o: object, field: string) => had.get(o)?.includes(field) ?? false;
      for (const { obj, entry } of revive) entry.revive!(obj, context, hadField);
      return out;
    }
  };
}

function isHook(v: unknown): v is { [HOOK]: string } {
  return typeof v === 'object' && v !== null && HOOK in v;
}
