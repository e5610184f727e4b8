// express-rate-limit 8.7.5 with rate-limit-redis 6.0.1 as its store, under express 5.3.0, run
// unchanged against sluice-server and, side by side, the reference redis-server 7.0.x. The store
// loads its Lua scripts with SCRIPT LOAD and runs them with EVALSHA (reloading on NOSCRIPT); its
// raw commands go through ioredis 6.0.0 (`call`) or node-redis 6.3.1 in RESP3 (`sendCommand`),
// the two ways its README shows. Each test starts an express app on a free loopback port and
// sends real HTTP requests: 5 of 8 answered 200 at 5 per minute, then 429 with the library's
// message and RateLimit headers (draft-6).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import Redis from 'ioredis-6';
import { createClient } from 'redis-6';
import { startTargets, stopTargets } from './harness.mjs';

const servers = {};
before(async () => Object.assign(servers, await startTargets()));
after(async () => stopTargets(servers));

// The two ways to hand rate-limit-redis a client: { client, sendCommand, close }.
const clients = {
  'ioredis 6': async (port) => {
    const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    await c.connect();
    return {
      client: c,
      sendCommand: (command, ...args) => c.call(command, ...args),
      raw: (...args) => c.call(...args),
      close: async () => c.disconnect(),
    };
  },
  'node-redis 6 (RESP3)': async (port) => {
    const c = createClient({ RESP: 3, socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
    c.on('error', () => {});
    await c.connect();
    return {
      client: c,
      sendCommand: (...args) => c.sendCommand(args),
      raw: (...args) => c.sendCommand(args),
      close: async () => c.close(),
    };
  },
};

// Starts an express app limited by `options` (plus the Redis store) on a free port.
async function startApp(sendCommand, prefix, options) {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: 5,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    store: new RedisStore({ sendCommand, prefix }),
    ...options,
  });
  const app = express();
  app.use(limiter);
  app.get('/', (req, res) => res.send('hello'));
  app.get('/fail', (req, res) => res.status(500).send('broken'));
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    limiter,
    async get(path = '/') {
      const r = await fetch(`http://127.0.0.1:${server.address().port}${path}`);
      const body = await r.text();
      const h = (name) => r.headers.get(name);
      const reset = Number(h('ratelimit-reset'));
      return {
        status: r.status,
        body,
        limit: h('ratelimit-limit'),
        remaining: h('ratelimit-remaining'),
        // Seconds until the window resets: 60 at its start, less as it runs (8 s of margin).
        reset: reset > 52 && reset <= 60 ? '~60' : h('ratelimit-reset'),
        retryAfter: r.status === 429 ? (Number(h('retry-after')) > 52 ? '~60' : h('retry-after'))
                                     : h('retry-after'),
      };
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

// Runs scenario(app, conn, another) on every server with a fresh client and app; asserts its
// result. another() starts one more app instance, on its own connection, sharing the store.
async function onEachServer(clientKind, prefix, options, scenario, expected) {
  for (const [kind, server] of Object.entries(servers)) {
    const opened = [];
    const another = async () => {
      const conn = await clients[clientKind](server.port);
      const app = await startApp(conn.sendCommand, prefix, options);
      opened.push({ conn, app });
      return { conn, app };
    };
    try {
      const { conn, app } = await another();
      await conn.raw('DEL', `${prefix}127.0.0.1`, `${prefix}::ffff:127.0.0.1`);
      assert.deepEqual(await scenario(app, conn, another), expected,
                       `${kind} answered differently`);
    } finally {
      for (const { conn, app } of opened) {
        await app.close();
        await conn.close();
      }
    }
  }
}

const ok = (remaining) =>
  ({ status: 200, body: 'hello', limit: '5', remaining: `${remaining}`, reset: '~60', retryAfter: null });
const limited = { status: 429, body: 'Too many requests, please try again later.', limit: '5',
                  remaining: '0', reset: '~60', retryAfter: '~60' };

for (const clientKind of Object.keys(clients)) {
  describe(`express-rate-limit + rate-limit-redis with ${clientKind}`, () => {
    const tag = clientKind.startsWith('io') ? 'io' : 'nr';

    test('5 of 8 requests answered, then 429 with RateLimit headers and Retry-After', async () => {
      await onEachServer(clientKind, `erl-${tag}-a:`, {}, async (app) => {
        const got = [];
        for (let i = 0; i < 8; i++) got.push(await app.get());
        return got;
      }, [ok(4), ok(3), ok(2), ok(1), ok(0), limited, limited, limited]);
    });

    test('the store reloads its scripts after SCRIPT FLUSH (NOSCRIPT) and keeps counting',
         async () => {
      await onEachServer(clientKind, `erl-${tag}-b:`, {}, async (app, conn) => {
        const got = [await app.get(), await app.get()];
        got.push(await conn.raw('SCRIPT', 'FLUSH'));
        got.push(await app.get(), await app.get(), await app.get(), await app.get());
        return got;
      }, [ok(4), ok(3), 'OK', ok(2), ok(1), ok(0), limited]);
    });

    // For a missing key the get script returns {GET's nil, PTTL's -2}: Lua false inside a table,
    // which Redis sends as a null in RESP2 and in RESP3 alike (the script did not call
    // redis.setresp(3)), so the store parses it as NaN hits.
    test('getKey reads the count (NaN for an unknown client); resetKey lets a client back in',
         async () => {
      const hits = (info) => (Number.isNaN(info.totalHits) ? 'NaN' : info.totalHits);
      await onEachServer(clientKind, `erl-${tag}-c:`, {}, async (app) => {
        const got = [hits(await app.limiter.getKey('203.0.113.9'))];
        for (let i = 0; i < 6; i++) await app.get();
        const ip = (await app.limiter.getKey('127.0.0.1')).totalHits
          ? '127.0.0.1' : '::ffff:127.0.0.1';
        const info = await app.limiter.getKey(ip);
        const ms = info.resetTime.getTime() - Date.now();
        got.push(info.totalHits, ms > 52_000 && ms <= 60_000);
        await app.limiter.resetKey(ip);
        got.push(hits(await app.limiter.getKey(ip)), await app.get());
        return got;
      }, ['NaN', 6, true, 'NaN', ok(4)]);
    });

    test('skipFailedRequests gives the point back (DECR) when the handler fails', async () => {
      await onEachServer(clientKind, `erl-${tag}-d:`, { skipFailedRequests: true },
                         async (app) => {
        const got = [];
        for (let i = 0; i < 3; i++) got.push((await app.get('/fail')).status);
        for (let i = 0; i < 6; i++) got.push((await app.get()).status);
        return got;
      }, [500, 500, 500, 200, 200, 200, 200, 200, 429]);
    });

    test('3 app instances, 30 requests at once: exactly 5 answered, 25 limited', async () => {
      await onEachServer(clientKind, `erl-${tag}-e:`, {}, async (app, conn, another) => {
        const apps = [app, (await another()).app, (await another()).app];
        const all = await Promise.all(Array.from({ length: 30 }, (_, i) => apps[i % 3].get()));
        const count = (status) => all.filter((r) => r.status === status).length;
        const remaining = all.filter((r) => r.status === 200).map((r) => r.remaining).sort();
        return [count(200), count(429), remaining.join(',')];
      }, [5, 25, '0,1,2,3,4']);
    });
  });
}
