// A Redis Cluster of a test's own: three masters (redis-server on free ports, nothing saved), slots assigned with
// `redis-cli --cluster create`, ready once every node reports cluster_state:ok.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Child, freePort } from './processes.js';

export interface RedisCluster {
  /** One node's URL: the seed REDIS_URL with REDIS_CLUSTER=true. */
  url: string;
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const ports = await Promise.all(Array.from({ length: masters }, freePort));
  const nodes = ports.map(
    (port) =>
      new Child(
        `redis-cluster-${port}`,
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
        ],
        { env: { PATH: process.env.PATH }, readyLine: /Ready to accept connections/ },
      ),
  );
  const cli = (port: number, ...args: string[]) =>
    execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { stdio: 'pipe' }).toString();
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Each node answers once it has said so; pinging before then would be refused.
    await Promise.all(nodes.map((node) => node.start()));
    cli(
      ports[0]!,
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    );
    for (const port of ports)
      for (let i = 0; !cli(port, 'cluster', 'info').includes('cluster_state:ok'); i++) {
        if (i > 100) throw new Error(`redis cluster node ${port} never reported cluster_state:ok`);
        await sleep(100);
      }
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `redis://127.0.0.1:${ports[0]}`, stop };
}
