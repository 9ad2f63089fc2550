// Figures read from a redis-server for the distributed bench: INFO sections, its CPU, the entries
// ever added to streams, and the commands idle workers send.
import type { Redis } from 'ioredis';

export function parseInfo(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) m.set(line.slice(0, i), line.slice(i + 1));
  }
  return m;
}

export async function redisCpuMs(r: Redis): Promise<number> {
  const info = parseInfo(await r.info('cpu'));
  return (Number(info.get('used_cpu_sys')) + Number(info.get('used_cpu_user'))) * 1000;
}

/** Entries ever added to the streams matching `pattern` (XINFO STREAM entries-added, Redis >= 7). */
export async function streamEntriesAdded(r: Redis, pattern: string): Promise<number> {
  let total = 0;
  for (const key of await r.keys(pattern)) {
    const info = (await r.xinfo('STREAM', key)) as unknown[];
    const i = info.indexOf('entries-added');
    if (i >= 0) total += Number(info[i + 1]);
  }
  return total;
}

/** Redis commands per second and per worker while `workers` wait `idleSeconds` with nothing to do. */
export async function idleLoad(
  stats: Redis,
  workers: number,
  idleSeconds: number,
): Promise<{ perWorkerPerSec: number; top: string; clients: number }> {
  const clients = Number(parseInfo(await stats.info('clients')).get('connected_clients'));
  await stats.config('RESETSTAT');
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const commands: [string, number][] = [];
  for (const [k, v] of parseInfo(await stats.info('commandstats'))) {
    const calls = /calls=(\d+)/.exec(v);
    const name = k.replace(/^cmdstat_/, '');
    if (calls && name !== 'info' && name !== 'config') commands.push([name, Number(calls[1])]);
  }
  const total = commands.reduce((s, [, n]) => s + n, 0);
  commands.sort((a, b) => b[1] - a[1]);
  return {
    clients,
    perWorkerPerSec: total / idleSeconds / workers,
    top: commands
      .slice(0, 6)
      .map(([n, c]) => `${n} ${(c / idleSeconds / workers).toFixed(2)}`)
      .join(', '),
  };
}
