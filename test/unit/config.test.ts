import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadProcessEnv } from '../../common/config/index.js';
import { applyConfigEnv, loadLanggraphConfig } from '../../runtime/config/index.js';
import { systemAssistantId } from '../../runtime/graphs/index.js';

function configFile(content: unknown, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'gd-config-'));
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, name), text);
  const path = join(dir, 'langgraph.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('langgraph.json', () => {
  it('accepts the official schema, graph entries in both forms', () => {
    const loaded = loadLanggraphConfig(
      configFile({
        graphs: { a: './a.ts:graph', b: { path: './b.js', description: 'B' } },
        http: { disable_meta: false },
      }),
    );
    expect(loaded.config.graphs.b).toEqual({ path: './b.js', description: 'B' });
  });

  it('names unknown keys, wrong types and invalid JSON', () => {
    expect(() => loadLanggraphConfig(configFile({ graphs: {}, htp: {} }))).toThrow(/htp/);
    expect(() =>
      loadLanggraphConfig(configFile({ graphs: {}, http: { disable_runs: 'yes' } })),
    ).toThrow(/http\.disable_runs/);
    expect(() => loadLanggraphConfig(configFile('{"graphs": '))).toThrow(/not valid JSON/);
    expect(() => loadLanggraphConfig('/nonexistent/langgraph.json')).toThrow(/not found/);
  });

  it('applies env from an object or a .env file without overriding the process', () => {
    const env: NodeJS.ProcessEnv = { KEEP: 'process' };
    applyConfigEnv(
      loadLanggraphConfig(configFile({ graphs: {}, env: { KEEP: 'file', NEW: 'v' } })),
      env,
    );
    expect(env).toEqual({ KEEP: 'process', NEW: 'v' });
    const fromFile: NodeJS.ProcessEnv = {};
    applyConfigEnv(
      loadLanggraphConfig(configFile({ graphs: {}, env: '.env' }, { '.env': 'A=1\nB="two"\n' })),
      fromFile,
    );
    expect(fromFile).toEqual({ A: '1', B: 'two' });
  });
});

describe('process environment', () => {
  it('parses API keys from the variable and a key file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-keys-'));
    writeFileSync(join(dir, 'keys'), 'k3\nk4\n');
    const env = loadProcessEnv({
      GRAPHDOCK_API_KEYS: 'k1, k2',
      GRAPHDOCK_API_KEYS_FILE: join(dir, 'keys'),
    });
    expect(env.apiKeys).toEqual(['k1', 'k2', 'k3', 'k4']);
    expect(env.logLevel).toBe('info');
    expect(() => loadProcessEnv({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  it('names a key file it cannot read, as a ConfigError', () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'gd-keys-')), 'absent');
    expect(() => loadProcessEnv({ GRAPHDOCK_API_KEYS_FILE: missing })).toThrow(ConfigError);
    expect(() => loadProcessEnv({ GRAPHDOCK_API_KEYS_FILE: missing })).toThrow(
      `GRAPHDOCK_API_KEYS_FILE: cannot read ${missing}: ENOENT`,
    );
  });

  it("reads the runtime's PORT, as the official server does", () => {
    expect(loadProcessEnv({ PORT: '9001' }).port).toBe(9001);
    expect(loadProcessEnv({}).port).toBeUndefined();
    expect(() => loadProcessEnv({ PORT: 'http' })).toThrow(/PORT/);
  });

  it('reads how long start-up waits for the database, in seconds', () => {
    expect(loadProcessEnv({}).databaseWaitMs).toBe(30_000);
    expect(loadProcessEnv({ GRAPHDOCK_DATABASE_WAIT_SECS: '2.5' }).databaseWaitMs).toBe(2500);
    expect(loadProcessEnv({ GRAPHDOCK_DATABASE_WAIT_SECS: '0' }).databaseWaitMs).toBe(0);
    for (const bad of ['-1', 'soon', '99999'])
      expect(() => loadProcessEnv({ GRAPHDOCK_DATABASE_WAIT_SECS: bad })).toThrow(
        /GRAPHDOCK_DATABASE_WAIT_SECS/,
      );
  });
});

describe('systemAssistantId', () => {
  it('matches the ids the official servers derive', () => {
    expect(systemAssistantId('agent')).toBe('fe096781-5601-53d2-b2f6-0d3403f7e9ca');
    expect(systemAssistantId('echo')).toBe('046b5dc7-2108-582c-9c6c-31d556d138f0');
  });
});
