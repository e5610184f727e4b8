// @fastify/rate-limit 11.2.0 with its Redis store under fastify 5.12.8, run unchanged against
// sluice-server and, side by side, the reference redis-server 7.0.x. The store needs ioredis
// (its scripts are ioredis commands made with defineCommand: EVALSHA, EVAL on NOSCRIPT); this
// uses ioredis 6.0.0 (package alias `ioredis-6`). Each test starts a fastify app on a free
// loopback port and sends real HTTP requests: 5 of 8 answered at 5 per minute, then 429 with the
// plugin's JSON error and x-ratelimit-* / retry-after headers. The exponential backoff case
// checks Lua number handling (2^n is a float passed to PEXPIRE and returned as an integer).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import rateLimit from '@fastify/rate-limit';
import Redis from 'ioredis-6';
import { startTargets, stopTargets } from './harness.mjs';

const servers = {};
before(async () => Object.assign(servers, await startTargets()));
after(async () => stopTargets(servers));

// Seconds as the plugin reports them (ceil of the PTTL): `~N` when within 5 s below N.
const near = (value, n) => (Number(value) <= n && Number(value) > n - 5 ? `~${n}` : value);

// Starts fastify with the plugin (options plus the Redis store) and `routes(app)` on a free port.
async function startApp(redis, options, routes) {
  const app = Fastify({ logger: false });
  await app.register(rateLimit, { max: 5, timeWindow: 60_000, redis, ...options });
  routes(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address();
  return {
    app,
    async get(path, windowS = 60) {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      const h = (name) => r.headers.get(name);
      let body = await r.text();
      try { body = JSON.parse(body); } catch { /* plain text */ }
      return {
        status: r.status,
        body,
        limit: h('x-ratelimit-limit'),
        remaining: h('x-ratelimit-remaining'),
        reset: near(h('x-ratelimit-reset'), windowS),
        retryAfter: h('retry-after') === null ? null : near(h('retry-after'), windowS),
      };
    },
    close: () => app.close(),
  };
}

// Runs scenario(app, redis) on every server with a fresh client and app; asserts its result.
async function onEachServer(nameSpace, options, routes, scenario, expected) {
  for (const [kind, server] of Object.entries(servers)) {
    const redis = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true,
                              maxRetriesPerRequest: 0 });
    await redis.connect();
    const keys = await redis.keys(`${nameSpace}*`);
    if (keys.length) await redis.del(...keys);
    const app = await startApp(redis, { nameSpace, ...options }, routes);
    try {
      assert.deepEqual(await scenario(app, redis), expected, `${kind} answered differently`);
    } finally {
      await app.close();
      redis.disconnect();
    }
  }
}

const hello = (app) => app.get('/', async () => 'hello');
const ok = (remaining, limit = 5, window = 60) => ({
  status: 200, body: 'hello', limit: `${limit}`, remaining: `${remaining}`, reset: `~${window}`,
  retryAfter: null,
});
const limited = (limit = 5, window = 60, after = '1 minute') => ({
  status: 429,
  body: { statusCode: 429, error: 'Too Many Requests',
          message: `Rate limit exceeded, retry in ${after}` },
  limit: `${limit}`, remaining: '0', reset: `~${window}`, retryAfter: `~${window}`,
});

describe('@fastify/rate-limit with its Redis store (ioredis 6)', () => {
  test('5 of 8 requests answered, then 429 with the plugin\'s error and headers', async () => {
    await onEachServer('frl-a-', {}, hello, async (app) => {
      const got = [];
      for (let i = 0; i < 8; i++) got.push(await app.get('/'));
      return got;
    }, [ok(4), ok(3), ok(2), ok(1), ok(0), limited(), limited(), limited()]);
  });

  test('a route\'s own limit uses its own key and window', async () => {
    const routes = (app) => {
      hello(app);
      app.get('/strict', { config: { rateLimit: { max: 2, timeWindow: '30 seconds' } } },
              async () => 'hello');
    };
    await onEachServer('frl-b-', {}, routes, async (app, redis) => {
      const got = [await app.get('/strict', 30), await app.get('/strict', 30),
                   await app.get('/strict', 30), await app.get('/')];
      got.push((await redis.keys('frl-b-*')).sort());
      return got;
    }, [ok(1, 2, 30), ok(0, 2, 30), limited(2, 30, '30 seconds'), ok(4),
        ['frl-b-127.0.0.1', 'frl-b-GET/strict-127.0.0.1']]);
  });

  test('exponentialBackoff doubles the window on each request over the limit', async () => {
    await onEachServer('frl-c-', { max: 1, timeWindow: 10_000, exponentialBackoff: true }, hello,
                       async (app, redis) => {
      const got = [(await app.get('/', 10)).status];
      for (const s of [10, 20, 40, 80]) {
        const r = await app.get('/', s);
        got.push([r.status, r.retryAfter]);
      }
      const pttl = await redis.pttl('frl-c-127.0.0.1');
      got.push(pttl > 75_000 && pttl <= 80_000);
      return got;
    }, [200, [429, '~10'], [429, '~20'], [429, '~40'], [429, '~80'], true]);
  });

  test('ban answers 403 once the requests over the limit pass it', async () => {
    await onEachServer('frl-d-', { max: 2, ban: 1 }, hello, async (app) => {
      const got = [];
      for (let i = 0; i < 5; i++) got.push((await app.get('/')).status);
      return got;
    }, [200, 200, 429, 403, 403]);
  });

  test('createRateLimit with increment:false reads the window without consuming (read script)',
       async () => {
    const routes = (app) => {
      const check = app.createRateLimit({ max: 3, timeWindow: '1 minute' });
      app.get('/peek', async (req) => {
        const s = await check(req, { increment: false });
        return { remaining: s.remaining, exceeded: s.isExceeded, ttl: near(s.ttlInSeconds, 60) };
      });
      app.get('/take', async (req) => {
        const s = await check(req);
        return { remaining: s.remaining, exceeded: s.isExceeded, ttl: near(s.ttlInSeconds, 60) };
      });
    };
    await onEachServer('frl-e-', { global: false }, routes, async (app) => {
      const got = [];
      for (const p of ['/peek', '/take', '/peek', '/take', '/take', '/take', '/peek']) {
        got.push((await app.get(p)).body);
      }
      return got;
    }, [{ remaining: 3, exceeded: false, ttl: 0 },
        { remaining: 2, exceeded: false, ttl: '~60' },
        { remaining: 2, exceeded: false, ttl: '~60' },
        { remaining: 1, exceeded: false, ttl: '~60' },
        { remaining: 0, exceeded: false, ttl: '~60' },
        { remaining: 0, exceeded: true, ttl: '~60' },
        { remaining: 0, exceeded: true, ttl: '~60' }]);
  });
});
