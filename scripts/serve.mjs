// A plain static file server for build/: what a designer gets from any static host.
// Honours BASE_PATH (the site is then served under that sub-path) and PORT.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

const root = new URL('../build/', import.meta.url).pathname;
const base = (process.env.BASE_PATH ?? '').replace(/\/$/, '');
const port = Number(process.env.PORT ?? 4173);
const host = process.env.HOST ?? '127.0.0.1';
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8'
};

async function resolveFile(pathname) {
  const rel = normalize(decodeURIComponent(pathname)).replace(/^(\.\.[/\\])+/, '');
  let file = join(root, rel);
  try {
    const s = await stat(file);
    if (s.isDirectory()) file = join(file, 'index.html');
    await stat(file);
    return file;
  } catch {
    try {
      await stat(file + '.html');
      return file + '.html';
    } catch {
      return null;
    }
  }
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  let pathname = url.pathname;
  if (base) {
    if (pathname === base) {
      res.writeHead(301, { location: base + '/' }).end();
      return;
    }
    if (!pathname.startsWith(base + '/')) {
      res.writeHead(404).end('not found');
      return;
    }
    pathname = pathname.slice(base.length);
  }
  const file = await resolveFile(pathname);
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    return;
  }
  const body = await readFile(file);
  res.writeHead(200, {
    'content-type': types[extname(file)] ?? 'application/octet-stream',
    'cache-control': 'no-cache'
  });
  res.end(body);
});

server.listen(port, host, () => {
  console.log(
    `Sampling Policy Lab: http://${host === '0.0.0.0' ? 'localhost' : host}:${port}${base}/`
  );
});
