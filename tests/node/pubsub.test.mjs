// Pub/sub through ioredis (subscribe, psubscribe, ssubscribe) and node-redis 4 and 5 (subscribe,
// pSubscribe; RESP2, and RESP3 push frames for node-redis 5), the clients Node applications (Socket.IO's Redis adapter, job queues) use.
// Each scenario runs against sluice-server and, side by side, the reference redis-server 7.0.x;
// the results must equal the expected values written here.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { createClient as createClient4 } from 'redis';
import { createClient as createClient5 } from 'redis-5';
import { plain, sluiceAndReference } from './harness.mjs';

const onBoth = sluiceAndReference();

// Resolves with the first `n` events pushed by `collect` (which calls the callback it is given).
function collector(n) {
  const got = [];
  let done;
  const all = new Promise((resolve, reject) => {
    done = resolve;
    setTimeout(() => reject(new Error(`only ${got.length} of ${n} messages: ${JSON.stringify(got)}`)),
               10_000).unref();
  });
  return {
    push: (...event) => {
      got.push(event.map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : v)));
      if (got.length === n) done(got);
    },
    all,
  };
}

describe('ioredis', () => {
  test('subscribe, psubscribe and ssubscribe receive what publish and spublish send', async () => {
    await onBoth(async (port) => {
      const sub = new Redis({ port, host: '127.0.0.1' });
      const pub = new Redis({ port, host: '127.0.0.1' });
      try {
        const events = collector(4);
        sub.on('message', (ch, msg) => events.push('message', ch, msg));
        sub.on('pmessage', (pat, ch, msg) => events.push('pmessage', pat, ch, msg));
        sub.on('smessage', (ch, msg) => events.push('smessage', ch, msg));
        const counts = [await sub.subscribe('news', 'sports'), await sub.psubscribe('user:*'),
                        await sub.ssubscribe('shard')];
        const sent = [await pub.publish('news', 'n1'), await pub.publish('user:1', 'u1'),
                      await pub.spublish('shard', 's1'), await pub.publish('sports', 's2'),
                      await pub.publish('nobody', 'x')];
        const got = await events.all;
        const numsub = await pub.pubsub('NUMSUB', 'news', 'sports', 'none');
        await sub.unsubscribe('news');
        const after = await pub.publish('news', 'gone');
        return [counts, sent, got, numsub, after];
      } finally {
        sub.disconnect();
        pub.disconnect();
      }
    }, [[2, 3, 1], [1, 1, 1, 1, 0],
        [['message', 'news', 'n1'], ['pmessage', 'user:*', 'user:1', 'u1'],
         ['smessage', 'shard', 's1'], ['message', 'sports', 's2']],
        ['news', 1, 'sports', 1, 'none', 0], 0]);
  });

  test('unsubscribing from everything leaves subscriber mode', async () => {
    await onBoth(async (port) => {
      const sub = new Redis({ port, host: '127.0.0.1' });
      try {
        const counts = [await sub.subscribe('c1', 'c2'), await sub.psubscribe('p*')];
        await sub.unsubscribe('c1', 'c2');  // ioredis's unsubscribe() without names never settles
        await sub.punsubscribe('p*');
        return [counts, await sub.set('io:ps', 'v'), await sub.get('io:ps')];
      } finally {
        sub.disconnect();
      }
    }, [[2, 3], 'OK', 'v']);
  });
});

// node-redis 5 speaks RESP2 by default and RESP3 when asked: messages then arrive as push frames.
const nodeRedisClients = [
  ['node-redis 4', (port) => createClient4({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } })],
  ['node-redis 5', (port) => createClient5({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } })],
  ['node-redis 5 RESP3', (port) => createClient5({ RESP: 3, socket: { port, host: '127.0.0.1', reconnectStrategy: false } })],
];

for (const [name, makeClient] of nodeRedisClients) {
  describe(name, () => {
    test('subscribe and pSubscribe listeners get every message in order', async () => {
      await onBoth(async (port) => {
        const pub = makeClient(port);
        pub.on('error', () => {});
        await pub.connect();
        const sub = pub.duplicate();
        sub.on('error', () => {});
        await sub.connect();
        try {
          const events = collector(6);
          await sub.subscribe('jobs', (msg, ch) => events.push('jobs', ch, msg));
          await sub.pSubscribe('job*', (msg, ch) => events.push('job*', ch, msg));
          const sent = [];
          for (const m of ['a', 'b', 'c']) sent.push(await pub.publish('jobs', m));
          const got = await events.all;
          return [sent, got.filter((e) => e[0] === 'jobs'), got.filter((e) => e[0] === 'job*'),
                  await pub.pubSubNumPat()];
        } finally {
          await sub.quit().catch(() => sub.disconnect());
          await pub.quit().catch(() => pub.disconnect());
        }
      }, [[2, 2, 2], [['jobs', 'jobs', 'a'], ['jobs', 'jobs', 'b'], ['jobs', 'jobs', 'c']],
          [['job*', 'jobs', 'a'], ['job*', 'jobs', 'b'], ['job*', 'jobs', 'c']], 1]);
    });
  });
}
