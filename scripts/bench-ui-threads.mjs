// CPU time of the browser's threads, read from Linux's /proc: what bench:ui's live figure costs
// each thread whatever else the machine runs. Wall-clock throughput moves with the machine's load
// (two other jobs on two cores halved it between two runs of the same build); a thread's own CPU
// time per request does not, or far less. Only the processes this Node process started (the
// browser and its children) are read. Elsewhere (no /proc) it answers null.
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ on Linux

/** `[ppid, comm, utime + stime]` of a /proc stat line (comm may hold spaces and parentheses). */
function parseStat(text) {
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  // After comm: state(0) ppid(1) … utime(11) stime(12).
  return [Number(f[1]), comm, Number(f[11]) + Number(f[12])];
}

function read(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * CPU ms of every thread of this process's descendants, summed by process kind and thread name
 * (`renderer DedicatedWorker`: a page's worker; `renderer chromium`: a page's main thread;
 * `renderer ThreadPoolForeg`: V8's helpers, its concurrent garbage collection among them;
 * `browser …`: IndexedDB's writes among others), or null without /proc.
 */
export function threadCpu() {
  let pids;
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  const children = new Map();
  for (const pid of pids) {
    const s = read(`/proc/${pid}/stat`);
    if (!s) continue;
    const [ppid] = parseStat(s);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(pid));
  }
  const ours = [];
  const todo = [...(children.get(process.pid) ?? [])];
  while (todo.length) {
    const pid = todo.pop();
    ours.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  const byName = new Map();
  for (const pid of ours) {
    // The process's kind: Chromium's `--type=` (renderer, gpu-process, utility), else the browser.
    const type = /--type=([a-z-]+)/.exec(read(`/proc/${pid}/cmdline`)?.replace(/\0/g, ' ') ?? '');
    const kind = type ? type[1] : 'browser';
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      const s = read(`/proc/${pid}/task/${tid}/stat`);
      if (!s) continue;
      const [, comm, ticks] = parseStat(s);
      const name = `${kind} ${comm}`;
      byName.set(name, (byName.get(name) ?? 0) + (ticks * 1000) / TICKS_PER_S);
    }
  }
  return byName;
}

/** What each thread name spent between two readings (ms), largest first. */
export function cpuSince(before, after) {
  if (!before || !after) return null;
  return [...after]
    .map(([name, ms]) => [name, ms - (before.get(name) ?? 0)])
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
}
