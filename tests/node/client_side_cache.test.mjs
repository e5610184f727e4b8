// node-redis 5's and 6's client-side cache (RESP3 + CLIENT TRACKING) against sluice-server, side by side
// with the reference redis-server: a repeated read is served from the cache, another client's
// write (and FLUSHALL) invalidates it, and the next read sees the new value.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient as createClient5 } from 'redis-5';
import { createClient as createClient6 } from 'redis-6';
import { startTargets, stopTargets } from './harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function scenario(createClient, port) {
  const url = `redis://127.0.0.1:${port}`;
  const cached = createClient({ url, RESP: 3, clientSideCache: { ttl: 0, maxEntries: 0 } });
  const writer = createClient({ url });
  await cached.connect();
  await writer.connect();
  const out = [];
  try {
    await writer.set('k', 'v1');
    out.push(await cached.get('k'));
    out.push(await cached.get('k'));
    const afterTwo = cached.clientSideCache.stats();
    out.push(['hits', afterTwo.hitCount, 'misses', afterTwo.missCount]);
    await writer.set('k', 'v2');
    await sleep(100);  // the invalidation reaches the cached client
    out.push(await cached.get('k'));
    await writer.hSet('h', 'f', '1');
    out.push(await cached.hGet('h', 'f'));
    out.push(await cached.hGet('h', 'f'));
    await writer.flushAll();
    await sleep(100);
    out.push(await cached.hGet('h', 'f'));
    const end = cached.clientSideCache.stats();
    out.push(['hits', end.hitCount, 'misses', end.missCount]);
  } finally {
    cached.destroy();
    writer.destroy();
  }
  return out;
}

for (const [name, createClient] of [['node-redis 5', createClient5], ['node-redis 6', createClient6]]) {
  describe(`${name} client-side cache`, () => {
    let servers;
    before(async () => { servers = await startTargets(); });
    after(async () => { await stopTargets(servers); });

    test('reads are cached until another client writes', async () => {
      const expected = ['v1', 'v1', ['hits', 1, 'misses', 1], 'v2', '1', '1', null,
                        ['hits', 2, 'misses', 4]];
      for (const s of Object.values(servers)) {
        assert.deepEqual(await scenario(createClient, s.port), expected, s.kind);
      }
    });
  });
}
