// rate-limiter-flexible 11.4.0 (RateLimiterRedis) run unchanged against sluice-server and, side
// by side, the reference redis-server 7.0.x, through two clients:
// - ioredis 6.0.0 (package alias `ioredis-6`): the library defines its Lua script as a command
//   (defineCommand: EVALSHA, then EVAL on NOSCRIPT);
// - node-redis 6.3.1 (package alias `redis-6`), in RESP3 (`RESP: 3`, sent as HELLO 3) and in
//   RESP2: the library calls EVAL with the script each time.
// consume/get/block/penalty/reward/delete and blockDuration each assert exact points (5 of 8
// allowed at 5 per minute, the rejections being the library's own RateLimiterRes, not an Error)
// and the milliseconds before the next point within the window. The limiter's time is the
// server's real clock (the script uses EX/PTTL), so durations are asserted within a margin.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import Redis from 'ioredis-6';
import { createClient } from 'redis-6';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { startTargets, stopTargets } from './harness.mjs';

// A rejected or resolved outcome, comparable across servers. msBeforeNext becomes `~Ns` when it
// lies in (N s - MARGIN_MS, N s], the window just started; otherwise it stays a number.
const MARGIN_MS = 8_000;  // generous: the machine may be busy
function outcome(kind, value, windowS) {
  if (value instanceof Error) return { [kind]: 'Error', message: value.message };
  if (value === null) return { [kind]: null };
  assert.ok(value instanceof RateLimiterRes, `expected a RateLimiterRes, got ${value}`);
  const ms = value.msBeforeNext;
  const windowMs = windowS * 1000;
  const near = ms <= windowMs && ms > windowMs - MARGIN_MS;
  return {
    [kind]: {
      consumed: value.consumedPoints,
      remaining: value.remainingPoints,
      first: value.isFirstInDuration,
      msBeforeNext: near ? `~${windowS}s` : ms,
    },
  };
}

async function settle(promise, windowS) {
  try {
    return outcome('ok', await promise, windowS);
  } catch (e) {
    return outcome('rejected', e, windowS);
  }
}

const servers = {};
before(async () => Object.assign(servers, await startTargets()));
after(async () => stopTargets(servers));

// The clients under test. Each makes a connected client for a port and closes it.
const clients = {
  'ioredis 6': {
    async open(port) {
      const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
      await c.connect();
      return { client: c, opts: {}, close: async () => c.disconnect() };
    },
  },
  'node-redis 6 (RESP3)': { open: (port) => openNodeRedis(port, 3) },
  'node-redis 6 (RESP2)': { open: (port) => openNodeRedis(port, 2) },
};

async function openNodeRedis(port, RESP) {
  const c = createClient({ RESP, socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
  c.on('error', () => {});
  await c.connect();
  return { client: c, opts: { useRedisPackage: true }, close: async () => c.close() };
}

// Runs scenario(make, client, connect) on every server with a fresh client; asserts its result.
// make(options) builds a limiter on that client; connect() opens another connection and gives
// its make (closed with the first).
async function onEachServer(clientKind, scenario, expected) {
  for (const [kind, server] of Object.entries(servers)) {
    const opened = [];
    const connect = async () => {
      const conn = await clients[clientKind].open(server.port);
      opened.push(conn);
      return (o) => new RateLimiterRedis({ storeClient: conn.client, ...conn.opts, ...o });
    };
    try {
      const make = await connect();
      const got = await scenario(make, opened[0].client, connect);
      assert.deepEqual(got, expected, `${kind} answered differently`);
    } finally {
      for (const conn of opened) await conn.close();
    }
  }
}

const allowed = (consumed, remaining, first, window = '~60s') =>
  ({ ok: { consumed, remaining, first, msBeforeNext: window } });
const denied = (consumed, window = '~60s') =>
  ({ rejected: { consumed, remaining: 0, first: false, msBeforeNext: window } });

for (const clientKind of Object.keys(clients)) {
  describe(`RateLimiterRedis with ${clientKind}`, () => {
    const prefix = `rlf-${clientKind.replace(/\W+/g, '')}`;

    test('5 of 8 allowed at 5 per minute; the 6th is rejected with a RateLimiterRes', async () => {
      await onEachServer(clientKind, async (make) => {
        const rl = make({ keyPrefix: `${prefix}-consume`, points: 5, duration: 60 });
        await rl.delete('u');
        const got = [];
        for (let i = 0; i < 8; i++) got.push(await settle(rl.consume('u'), 60));
        return got;
      }, [allowed(1, 4, true), allowed(2, 3, false), allowed(3, 2, false),
          allowed(4, 1, false), allowed(5, 0, false), denied(6), denied(7), denied(8)]);
    });

    test('consume of several points at once, then get and an unknown key', async () => {
      await onEachServer(clientKind, async (make) => {
        const rl = make({ keyPrefix: `${prefix}-get`, points: 10, duration: 30 });
        await rl.delete('u');
        return [await settle(rl.consume('u', 4), 30), await settle(rl.consume('u', 7), 30),
                await settle(rl.get('u'), 30), await settle(rl.get('nobody'), 30)];
      }, [allowed(4, 6, true, '~30s'), denied(11, '~30s'), allowed(11, 0, false, '~30s'),
          { ok: null }]);
    });

    test('block() rejects every consume for the block duration', async () => {
      await onEachServer(clientKind, async (make) => {
        const rl = make({ keyPrefix: `${prefix}-block`, points: 5, duration: 60 });
        await rl.delete('u');
        return [await settle(rl.consume('u'), 60), await settle(rl.block('u', 120), 120),
                await settle(rl.consume('u'), 120), await settle(rl.get('u'), 120)];
      }, [allowed(1, 4, true), allowed(6, 0, false, '~120s'), denied(7, '~120s'),
          allowed(7, 0, false, '~120s')]);
    });

    test('blockDuration: crossing the limit blocks the key in the store', async () => {
      await onEachServer(clientKind, async (make) => {
        const rl = make({ keyPrefix: `${prefix}-bd`, points: 2, duration: 20, blockDuration: 90 });
        await rl.delete('u');
        const got = [];
        for (let i = 0; i < 4; i++) got.push(await settle(rl.consume('u'), i < 2 ? 20 : 90));
        return got;
      }, [allowed(1, 1, true, '~20s'), allowed(2, 0, false, '~20s'), denied(3, '~90s'),
          denied(4, '~90s')]);
    });

    test('penalty() and reward() move the consumed points', async () => {
      await onEachServer(clientKind, async (make) => {
        const rl = make({ keyPrefix: `${prefix}-pr`, points: 5, duration: 60 });
        await rl.delete('u');
        const got = [await settle(rl.penalty('u', 3), 60), await settle(rl.consume('u', 2), 60),
                     await settle(rl.consume('u'), 60), await settle(rl.reward('u', 2), 60)];
        for (let i = 0; i < 3; i++) got.push(await settle(rl.consume('u'), 60));
        return got;
      }, [allowed(3, 2, true), allowed(5, 0, false), denied(6), allowed(4, 1, false),
          allowed(5, 0, false), denied(6), denied(7)]);
    });

    test('delete() removes the key: true once, then false; the next consume starts over',
         async () => {
      await onEachServer(clientKind, async (make, client) => {
        const rl = make({ keyPrefix: `${prefix}-del`, points: 1, duration: 60 });
        await rl.delete('u');
        const got = [await settle(rl.consume('u'), 60), await settle(rl.consume('u'), 60)];
        got.push(await rl.delete('u'), await rl.delete('u'), await client.exists(`${prefix}-del:u`));
        got.push(await settle(rl.consume('u'), 60));
        return got;
      }, [allowed(1, 0, true), denied(2), true, false, 0, allowed(1, 0, true)]);
    });

    test('the key holds a plain counter with the window as its TTL', async () => {
      await onEachServer(clientKind, async (make, client) => {
        const rl = make({ keyPrefix: `${prefix}-raw`, points: 5, duration: 60 });
        await rl.delete('u');
        await rl.consume('u', 2);
        const ttl = Number(await client.ttl(`${prefix}-raw:u`));
        return [await client.get(`${prefix}-raw:u`), ttl > 52 && ttl <= 60];
      }, ['2', true]);
    });

    // ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT; node-redis sends EVAL. Either
    // way the server caches the script (EVAL caches it, as in Redis), so EVALSHA works after.
    test('the first consume leaves the library\'s script in the server\'s cache', async () => {
      await onEachServer(clientKind, async (make, client) => {
        const call = (...args) => (client.call ? client.call(...args) : client.sendCommand(args));
        const rl = make({ keyPrefix: `${prefix}-cache`, points: 5, duration: 60 });
        const sha = createHash('sha1').update(rl._incrTtlLuaScript).digest('hex');
        const got = [await call('SCRIPT', 'FLUSH'), await call('SCRIPT', 'EXISTS', sha)];
        await rl.delete('u');
        got.push(await settle(rl.consume('u'), 60), await call('SCRIPT', 'EXISTS', sha));
        const [consumed, ttl] = await call('EVALSHA', sha, '1', `${prefix}-cache:u`, '1', '60', '5',
                                           '60');
        got.push(consumed, ttl > 52_000 && ttl <= 60_000);
        return got;
      }, ['OK', [0], allowed(1, 4, true), [1], 2, true]);
    });

    if (clientKind.includes('RESP3')) {
      test('the connection speaks RESP3 (HELLO reports proto 3)', async () => {
        await onEachServer(clientKind, async (make, client) => {
          const hello = await client.sendCommand(['HELLO']);
          return [hello.proto, hello.server];
        }, [3, 'redis']);
      });
    }

    test('20 concurrent consumers share 5 points: exactly 5 allowed', async () => {
      await onEachServer(clientKind, async (make) => {
        const rl = make({ keyPrefix: `${prefix}-conc`, points: 5, duration: 60 });
        await rl.delete('u');
        const all = await Promise.all(Array.from({ length: 20 }, () => settle(rl.consume('u'), 60)));
        const consumed = all.map((o) => (o.ok ?? o.rejected).consumed).sort((a, b) => a - b);
        return [all.filter((o) => o.ok).length, consumed.join(',')];
      }, [5, Array.from({ length: 20 }, (_, i) => i + 1).join(',')]);
    });

    // Scripts from many connections (Sluice serves them on several I/O threads) at one key:
    // each consume's script is atomic, so the counts are 1..80 each once and 25 are allowed.
    test('8 connections x 10 concurrent consumes share 25 points: exactly 25 allowed',
         async () => {
      await onEachServer(clientKind, async (make, client, connect) => {
        await make({ keyPrefix: `${prefix}-conns`, points: 25, duration: 60 }).delete('u');
        const limiters = await Promise.all(Array.from({ length: 8 }, async () =>
          (await connect())({ keyPrefix: `${prefix}-conns`, points: 25, duration: 60 })));
        const all = await Promise.all(limiters.flatMap((rl) =>
          Array.from({ length: 10 }, () => settle(rl.consume('u'), 60))));
        const consumed = all.map((o) => (o.ok ?? o.rejected).consumed).sort((a, b) => a - b);
        return [all.filter((o) => o.ok).length, consumed.join(','),
                await client.get(`${prefix}-conns:u`)];
      }, [25, Array.from({ length: 80 }, (_, i) => i + 1).join(','), '80']);
    });

    // SCRIPT FLUSH from another connection while they run: ioredis's EVALSHA gets NOSCRIPT and
    // falls back to EVAL, so every consume still counts exactly once.
    test('SCRIPT FLUSH during 80 consumes from 8 connections changes no count', async () => {
      await onEachServer(clientKind, async (make, client, connect) => {
        const call = (...args) => (client.call ? client.call(...args) : client.sendCommand(args));
        await make({ keyPrefix: `${prefix}-flush`, points: 25, duration: 60 }).delete('u');
        const limiters = await Promise.all(Array.from({ length: 8 }, async () =>
          (await connect())({ keyPrefix: `${prefix}-flush`, points: 25, duration: 60 })));
        const consumes = limiters.flatMap((rl) =>
          Array.from({ length: 10 }, () => settle(rl.consume('u'), 60)));
        const flushes = Array.from({ length: 5 }, () => call('SCRIPT', 'FLUSH'));
        const all = await Promise.all(consumes);
        const consumed = all.map((o) => (o.ok ?? o.rejected).consumed).sort((a, b) => a - b);
        return [all.filter((o) => o.ok).length, consumed.join(','), await Promise.all(flushes)];
      }, [25, Array.from({ length: 80 }, (_, i) => i + 1).join(','), Array(5).fill('OK')]);
    });
  });
}
