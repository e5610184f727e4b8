// MULTI/EXEC/WATCH through ioredis and node-redis, the clients Node applications (and their
// limiter libraries) use. Each scenario runs against sluice-server and, side by side, the
// reference redis-server 7.0.x; the results must be equal, and equal to the expected values
// written here (so a test still fails if both servers were wrong the same way).

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { createClient, WatchError } from 'redis';
import { plain, sluiceAndReference } from './harness.mjs';

const onBoth = sluiceAndReference();
const { servers } = onBoth;

async function withIoredis(port, fn) {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    c.disconnect();
  }
}

async function withNodeRedis(port, fn) {
  const c = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
  c.on('error', () => {});
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.quit().catch(() => c.disconnect());
  }
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('ioredis', () => {
  test('multi() queues and exec() answers every command', async () => {
    await onBoth((port) => withIoredis(port, async (c) => {
      await c.del('io:m1');
      return c.multi().set('io:m1', '5').incr('io:m1').get('io:m1').exists('io:m1').exec();
    }), [[null, 'OK'], [null, 6], [null, '6'], [null, 1]]);
  });

  test('a runtime error inside EXEC is that command\'s reply; the others still apply', async () => {
    await onBoth((port) => withIoredis(port, async (c) => {
      await c.del('io:m2');
      const replies = await c.multi().set('io:m2', 'x').incr('io:m2').append('io:m2', 'y')
                          .exec();
      return [replies, await c.get('io:m2')];
    }), [[[null, 'OK'], [{ error: 'ERR value is not an integer or out of range' }], [null, 2]],
         'xy']);
  });

  test('a command rejected while queuing aborts the whole transaction', async () => {
    await onBoth((port) => withIoredis(port, async (c) => {
      await c.set('io:m3', 'before');
      const err = await rejection(c.multi().set('io:m3', 'after').call('NOSUCHCOMMAND').exec());
      return [err.message, await c.get('io:m3')];
    }), ['EXECABORT Transaction discarded because of previous errors.', 'before']);
  });

  test('WATCH: EXEC answers null when another client changed the key', async () => {
    await onBoth((port) => withIoredis(port, async (a) => withIoredis(port, async (b) => {
      await a.set('io:w', '1');
      await a.watch('io:w');
      await b.set('io:w', '2');
      const conflicted = await a.multi().set('io:w', 'from-a').exec();
      await a.watch('io:w');
      const clean = await a.multi().set('io:w', 'from-a').exec();
      return [conflicted, clean, await b.get('io:w')];
    })), [null, [[null, 'OK']], 'from-a']);
  });

  test('pipeline() without multi answers in order', async () => {
    await onBoth((port) => withIoredis(port, async (c) => {
      await c.del('io:p');
      return c.pipeline().incrby('io:p', 3).incrby('io:p', 4).get('io:p').exec();
    }), [[null, 3], [null, 7], [null, '7']]);
  });

  test('optimistic increments from 20 clients lose no update', async () => {
    const clients = 20;
    const perClient = 10;
    await onBoth((port) => withIoredis(port, async (setup) => {
      await setup.set('io:counter', '0');
      const worker = (c) => (async () => {
        for (let done = 0; done < perClient;) {
          await c.watch('io:counter');
          const v = Number(await c.get('io:counter'));
          if (await c.multi().set('io:counter', `${v + 1}`).exec()) done++;
        }
      })();
      const conns = await Promise.all(Array.from({ length: clients }, async () => {
        const c = new Redis({ port, host: '127.0.0.1' });
        await c.ping();
        return c;
      }));
      try {
        await Promise.all(conns.map(worker));
      } finally {
        conns.forEach((c) => c.disconnect());
      }
      return setup.get('io:counter');
    }), `${clients * perClient}`);
  });

  test('limiter commands run inside MULTI, atomically with the rest (Sluice)', async () => {
    await withIoredis(servers.sluice.port, async (c) => {
      await c.del('io:gcra', 'io:log');
      await c.call('DEBUG', 'CLOCK', 'SET', '1700000000000');
      const taken = await c.multi()
          .call('GCRA.TAKE', 'io:gcra', '2', '1s')
          .call('GCRA.TAKE', 'io:gcra', '2', '1s')
          .call('GCRA.TAKE', 'io:gcra', '2', '1s')
          .incr('io:log')
          .exec();
      assert.deepEqual(taken, [[null, [1, 1, 0, 500, 2]], [null, [1, 0, 0, 1000, 2]],
                               [null, [0, 0, 500, 1000, 2]], [null, 1]]);
    });
  });
});

describe('node-redis', () => {
  test('multi().exec() answers every command', async () => {
    await onBoth((port) => withNodeRedis(port, async (c) => {
      await c.del('nr:m1');
      return c.multi().set('nr:m1', '5').incr('nr:m1').get('nr:m1').exec();
    }), ['OK', 6, '6']);
  });

  test('a runtime error inside EXEC comes back in its place', async () => {
    await onBoth((port) => withNodeRedis(port, async (c) => {
      await c.del('nr:m2');
      // node-redis rejects with a MultiErrorReply that carries every reply in its place.
      const err = await rejection(c.multi().set('nr:m2', 'x').incr('nr:m2').get('nr:m2').exec());
      return [err.errorIndexes, err.replies];
    }), [[1], ['OK', { error: 'ERR value is not an integer or out of range' }, 'x']]);
  });

  test('WATCH conflict rejects EXEC with WatchError and applies nothing', async () => {
    await onBoth((port) => withNodeRedis(port, async (a) => withNodeRedis(port, async (b) => {
      await a.set('nr:w', '1');
      await a.watch('nr:w');
      await b.set('nr:w', '2');
      const err = await rejection(a.multi().set('nr:w', 'from-a').exec());
      return [err instanceof WatchError, await b.get('nr:w')];
    })), [true, '2']);
  });

  test('executeIsolated + WATCH commits when nobody interferes', async () => {
    await onBoth((port) => withNodeRedis(port, async (c) => {
      await c.set('nr:iso', '10');
      const replies = await c.executeIsolated(async (iso) => {
        await iso.watch('nr:iso');
        const v = Number(await iso.get('nr:iso'));
        return iso.multi().set('nr:iso', `${v * 2}`).get('nr:iso').exec();
      });
      return [replies, await c.get('nr:iso')];
    }), [['OK', '20'], '20']);
  });

  test('a DISCARDed transaction applies nothing', async () => {
    await onBoth((port) => withNodeRedis(port, async (c) => {
      await c.set('nr:d', 'kept');
      const err = await rejection(c.multi().set('nr:d', 'lost').addCommand(['NOSUCH']).exec());
      return [err.message, await c.get('nr:d')];
    }), ['EXECABORT Transaction discarded because of previous errors.', 'kept']);
  });
});
