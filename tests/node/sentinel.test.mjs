// Node clients writing through a Sentinel failover: three Sluice nodes (a primary and two
// replicas, every node with replica-ack-writes 1, so a write is acknowledged only once a replica
// holds it) and three real redis-sentinel 7.0.x processes; the client (ioredis `sentinels:`,
// node-redis 5's and 6's createSentinel) writes while the primary is killed with SIGKILL. The client
// reaches the promoted replica by itself, and every write it was told succeeded is on the new
// primary. Skipped when redis-sentinel is not installed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { createSentinel as createSentinel5 } from 'redis-5';
import { createSentinel as createSentinel6 } from 'redis-6';
import { freePort, startServer } from './harness.mjs';

function sentinelBinary() {
  try {
    execFileSync('redis-sentinel', ['--version']);
    return 'redis-sentinel';
  } catch {
    return null;
  }
}

const SENTINEL = sentinelBinary();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(pred, what, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await pred();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

async function startSentinels(masterPort) {
  const out = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-sentinel-'));
    const conf = path.join(dir, 'sentinel.conf');
    fs.writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\n` +
      `sentinel monitor mymaster 127.0.0.1 ${masterPort} 2\n` +
      'sentinel down-after-milliseconds mymaster 1000\n' +
      'sentinel failover-timeout mymaster 10000\nsentinel parallel-syncs mymaster 2\n');
    const log = fs.openSync(path.join(dir, 'log'), 'w');
    const proc = spawn(SENTINEL, [conf], { stdio: ['ignore', log, log] });
    out.push({ port, proc, dir, log });
  }
  for (const s of out) {
    const c = new Redis({ port: s.port, host: '127.0.0.1', retryStrategy: () => 50 });
    c.on('error', () => {});
    await waitFor(async () => (await c.ping()) === 'PONG', 'sentinel');
    c.disconnect();
  }
  return out;
}

async function stopSentinels(sentinels) {
  for (const s of sentinels) {
    const done = new Promise((r) => s.proc.once('exit', r));
    s.proc.kill('SIGKILL');
    await done;
    fs.closeSync(s.log);
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
}

// A primary, two replicas and three sentinels that know them all.
async function startGroup() {
  const opts = ['--replica-ack-writes', '1', '--replica-ack-timeout', '5000'];
  const primary = await startServer('sluice', opts);
  const replicas = [await startServer('sluice', opts), await startServer('sluice', opts)];
  for (const r of replicas) {
    const c = new Redis({ port: r.port, host: '127.0.0.1' });
    await c.replicaof('127.0.0.1', primary.port);
    c.disconnect();
  }
  const p = new Redis({ port: primary.port, host: '127.0.0.1' });
  await waitFor(async () => /connected_slaves:2/.test(await p.info('replication')), 'replicas');
  p.disconnect();
  const sentinels = await startSentinels(primary.port);
  for (const s of sentinels) {
    const c = new Redis({ port: s.port, host: '127.0.0.1' });
    await waitFor(async () => (await c.call('SENTINEL', 'REPLICAS', 'mymaster')).length === 2 &&
      /sentinels=3/.test(await c.info('sentinel')), 'sentinel discovery');
    c.disconnect();
  }
  return {
    primary, replicas, sentinels,
    async stop() {
      await stopSentinels(sentinels);
      for (const n of [primary, ...replicas]) await n.stop();
    },
  };
}

// Writes k:0, k:1, ... through `set` until `after` writes succeeded after the kill; returns
// the acknowledged keys and how many writes failed meanwhile.
async function writeThroughFailover(group, set, after = 50) {
  const acked = [];
  let failed = 0;
  let killedAt = -1;
  for (let i = 0; acked.length - killedAt < after || killedAt < 0; i++) {
    if (i === 200) {
      killedAt = acked.length;
      await group.primary.kill9();
    }
    try {
      await set(`k:${i}`, String(i));
      acked.push(`k:${i}`);
    } catch {
      failed += 1;
      await sleep(50);
    }
  }
  return { acked, failed };
}

async function checkNewPrimary(group, acked) {
  const s = new Redis({ port: group.sentinels[0].port, host: '127.0.0.1' });
  const [, port] = await s.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster');
  s.disconnect();
  assert.notEqual(Number(port), group.primary.port);
  const c = new Redis({ port: Number(port), host: '127.0.0.1' });
  const values = await c.mget(...acked);
  c.disconnect();
  const lost = acked.filter((k, i) => values[i] !== k.slice(2));
  assert.deepEqual(lost, [], 'acknowledged writes lost across the failover');
}

test('ioredis sentinels: writes go on through a kill -9 failover, none acknowledged lost',
     { skip: SENTINEL === null && 'redis-sentinel is not installed' }, async () => {
  const group = await startGroup();
  const r = new Redis({
    sentinels: group.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
    name: 'mymaster',
    maxRetriesPerRequest: 1,
    retryStrategy: () => 100,
  });
  r.on('error', () => {});
  try {
    const { acked, failed } = await writeThroughFailover(group, (k, v) => r.set(k, v));
    console.log(`ioredis: ${acked.length} writes acknowledged, ${failed} failed during failover`);
    await checkNewPrimary(group, acked);
  } finally {
    r.disconnect();
    await group.stop();
  }
});

for (const [version, createSentinel] of [['5.9', createSentinel5], ['6.3', createSentinel6]]) {
  test(`node-redis ${version} createSentinel: writes go on through a kill -9 failover, none acknowledged lost`,
       { skip: SENTINEL === null && 'redis-sentinel is not installed' }, async () => {
    const group = await startGroup();
    const client = createSentinel({
      name: 'mymaster',
      sentinelRootNodes: group.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
    });
    client.on('error', () => {});
    await client.connect();
    try {
      const { acked, failed } = await writeThroughFailover(group, (k, v) => client.set(k, v));
      console.log(`node-redis ${version}: ${acked.length} writes acknowledged, ${failed} failed during failover`);
      await checkNewPrimary(group, acked);
    } finally {
      await client.close().catch(() => {});
      await group.stop();
    }
  });
}
