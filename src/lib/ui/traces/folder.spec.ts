import { describe, expect, it } from 'vitest';
import { folderOf, pickFolderLogs, skippedLine } from './folder';

describe('a folder of Claude Desktop logs', () => {
  it('takes mcp.log and mcp-server-*.log and skips the rest, saying which', () => {
    const paths = [
      'Claude/main.log',
      'Claude/mcp.log',
      'Claude/mcp-server-weather.log',
      'Claude/window.log',
      'Claude/.DS_Store',
      'Claude/old/mcp-server-memory.log',
      'Claude/mcp-server-.log.bak'
    ];
    const r = pickFolderLogs(paths.map((path) => ({ path, item: path })));
    expect(r.logs.map((l) => l.path)).toEqual([
      'mcp-server-weather.log',
      'mcp.log',
      'old/mcp-server-memory.log'
    ]);
    expect(r.skipped).toEqual(['.DS_Store', 'main.log', 'mcp-server-.log.bak', 'window.log']);
    expect(skippedLine(r.skipped)).toBe(
      'Skipped 4 files in the folder that are not MCP logs (mcp.log, mcp-server-<name>.log): .DS_Store, main.log, mcp-server-.log.bak, window.log.'
    );
    expect(skippedLine(['a.txt'])).toBe(
      'Skipped 1 file in the folder that is not an MCP log (mcp.log, mcp-server-<name>.log): a.txt.'
    );
    expect(skippedLine(['1', '2', '3'], 2)).toMatch(/: 1, 2 and 1 more\.$/);
    expect(skippedLine([])).toBe('');
    expect(folderOf('Claude/mcp.log')).toBe('Claude');
  });
});
