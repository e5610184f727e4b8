// Cluster clients, unchanged, against a cluster of N master nodes of one binary built by
// `redis-cli --cluster create`: ioredis `Cluster`, and node-redis `createCluster` (4.7, 5.9 and
// 6.3) running a Lua fixed-window limiter and
// GCRA.TAKE across many keys and slots; every master must take its share of the keys.
//
// The binary is a parameter: the scenarios run on redis-server 7.0.15 nodes (the expected values
// are Redis's) and on sluice-server nodes. By hand:
//   cd tests/node && SLUICE_SERVER=../../build/server/sluice-server node --test cluster.test.mjs

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { createCluster as createCluster4 } from 'redis';
import { createCluster as createCluster5 } from 'redis-5';
import { createCluster as createCluster6 } from 'redis-6';
import { referenceMissing } from './harness.mjs';

const MASTERS = 3;
const DEADLINE_MS = 60_000;  // generous: the machine may be busy building
const FIXED_WINDOW = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n <= tonumber(ARGV[1]) then return 1 end
return 0`;

// ---- starting a cluster (the one place that does it in Node)

function canBind(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

// A free port whose cluster bus port (port + 10000) is free too.
async function clusterPort() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 30000);
    if (await canBind(port) && await canBind(port + 10000)) return port;
  }
}

// Raw RESP2 command on a fresh connection; resolves to the reply's first line (errors included).
function rawCall(port, ...args) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = '';
    sock.once('error', reject);
    sock.on('connect', () => {
      sock.write(`*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(`${a}`)}\r\n${a}\r\n`).join(''));
    });
    sock.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.startsWith('$') && !/\r\n.*\r\n/s.test(data)) return;  // a bulk's body pending
      sock.destroy();
      resolve(data);
    });
  });
}

async function startCluster(binary, masters = MASTERS) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-cluster-'));
  const nodes = [];
  const cluster = {
    ports: () => nodes.map((n) => n.port),
    async stop() {
      for (const n of nodes) {
        if (n.exited === null) {
          const done = new Promise((r) => n.proc.once('exit', r));
          n.proc.kill('SIGKILL');
          await done;
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort();
      const d = path.join(dir, `${port}`);
      const data = path.join(d, 'data');  // no stderr.log among Sluice's write-ahead logs
      fs.mkdirSync(data, { recursive: true });
      const log = fs.openSync(path.join(d, 'stderr.log'), 'w');
      const args = ['--port', `${port}`, '--bind', '127.0.0.1', '--dir', data, '--cluster-enabled',
                    'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000',
                    '--save', '', '--appendonly', 'no'];
      const proc = spawn('setpriv', ['--pdeathsig', 'SIGKILL', '--', binary, ...args],
                         { stdio: ['ignore', log, log], cwd: data });
      const node = { port, proc, exited: null };
      proc.once('exit', (code, sig) => { node.exited = code ?? sig; });
      nodes.push(node);
    }
    for (const n of nodes) {
      const end = Date.now() + DEADLINE_MS;
      for (;;) {
        if (n.exited !== null) throw new Error(`node ${n.port} exited (${n.exited})`);
        try {
          await rawCall(n.port, 'PING');
          break;
        } catch {
          if (Date.now() > end) throw new Error(`node ${n.port} did not start`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  cluster.create = async () => {
    execFileSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`),
                               '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'pipe' });
    const end = Date.now() + DEADLINE_MS;
    for (;;) {
      const infos = await Promise.all(nodes.map((n) => rawCall(n.port, 'CLUSTER', 'INFO')));
      if (infos.every((i) => i.includes('cluster_state:ok') &&
                             i.includes(`cluster_known_nodes:${nodes.length}`))) return;
      if (Date.now() > end) throw new Error(`the cluster did not agree: ${infos[0]}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return cluster;
}

// Why sluice-server cannot form a cluster here, or null when it can.
// ---- the scenarios

async function keysPerNode(cluster) {
  return Promise.all(cluster.ports().map(async (p) => {
    const r = await rawCall(p, 'DBSIZE');
    return Number(r.slice(1));
  }));
}

async function flushAll(cluster) {
  for (const p of cluster.ports()) await rawCall(p, 'FLUSHALL');
}

// 300 keys, 5 hits each on a limit of 3: [1, 1, 1, 0, 0] for every key, on every master.
async function luaLimiter(cluster, evalOne) {
  await flushAll(cluster);
  const got = {};
  for (let i = 0; i < 300; i++) {
    const key = `rl:lua:${i}`;
    got[key] = [];
    for (let j = 0; j < 5; j++) got[key].push(Number(await evalOne(key)));
  }
  for (const [key, v] of Object.entries(got)) assert.deepEqual(v, [1, 1, 1, 0, 0], key);
  const counts = await keysPerNode(cluster);
  assert.equal(counts.reduce((a, b) => a + b, 0), 300);
  for (const n of counts) assert.ok(n > 50, `every master takes its share: ${counts}`);
}

// 100 keys, 8 GCRA.TAKEs each of a 5 per minute limit: 5 allowed, 3 denied, for every key.
async function gcraTake(take) {
  for (let i = 0; i < 100; i++) {
    const key = `rl:gcra:${i}`;
    const allowed = [];
    for (let j = 0; j < 8; j++) {
      // RESP2 clients get an array, RESP3 ones (node-redis 6) a map.
      const reply = await take(key);
      allowed.push(Number(Array.isArray(reply) ? reply[0] : reply.allowed));
    }
    assert.deepEqual(allowed, [1, 1, 1, 1, 1, 0, 0, 0], key);
  }
}

function scenarios(kind, binary) {
  describe(`a cluster of ${MASTERS} ${kind} nodes`, () => {
    let cluster = null;
    let skip = null;
    before(async () => {
      if (kind === 'redis') {
        skip = referenceMissing();
      } else if (!process.env.SLUICE_SERVER) {
        skip = 'SLUICE_SERVER is not set';
      }
      if (skip) {
        console.log(`# ${kind} cluster skipped: ${skip}`);
        return;
      }
      cluster = await startCluster(binary());
      await cluster.create();
    });
    after(async () => {
      if (cluster) await cluster.stop();
    });

    test('ioredis Cluster: a Lua fixed window and GCRA.TAKE across slots', async (t) => {
      if (skip) return t.skip(skip);
      const c = new Redis.Cluster(cluster.ports().map((port) => ({ host: '127.0.0.1', port })));
      try {
        await luaLimiter(cluster, (key) => c.eval(FIXED_WINDOW, 1, key, 3, 60000));
        if (kind === 'sluice') await gcraTake((key) => c.call('GCRA.TAKE', key, 5, 60000));
      } finally {
        c.disconnect();
      }
    });

    for (const [version, createCluster] of [['4.7', createCluster4], ['5.9', createCluster5],
                                           ['6.3', createCluster6]]) {
      test(`node-redis ${version} createCluster: the same`, async (t) => {
        if (skip) return t.skip(skip);
        const c = createCluster({
          rootNodes: cluster.ports().map((port) => ({ url: `redis://127.0.0.1:${port}` })),
        });
        c.on('error', () => {});
        await c.connect();
        try {
          await luaLimiter(cluster, (key) => c.sendCommand(key, false,
            ['EVAL', FIXED_WINDOW, '1', key, '3', '60000']));
          if (kind === 'sluice') {
            await gcraTake((key) => c.sendCommand(key, false, ['GCRA.TAKE', key, '5', '60000']));
          }
        } finally {
          await c.quit().catch(() => c.disconnect());
        }
      });
    }
  });
}

scenarios('redis', () => process.env.REDIS_SERVER || 'redis-server');
scenarios('sluice', () => path.resolve(process.env.SLUICE_SERVER));
