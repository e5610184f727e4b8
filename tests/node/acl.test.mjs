// ACL users through ioredis and node-redis (username/password options): a user limited to GET
// on rl:* on both servers (Sluice and the reference redis-server 7.0.x), the same results; and
// on Sluice, a user limited to GCRA.TAKE on rl:* (docs/security.md).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { startServer, referenceMissing, plain } from './harness.mjs';

const missing = referenceMissing();
const servers = {};

before(async () => {
  servers.sluice = await startServer('sluice');
  if (!missing) servers.redis = await startServer('redis');
  for (const s of Object.values(servers)) {
    const admin = new Redis(s.port);
    await admin.call('ACL', 'SETUSER', 'reader', 'on', '>readpass', '~rl:*', '-@all', '+get');
    admin.disconnect();
  }
});

after(async () => {
  for (const s of Object.values(servers)) await s.stop();
});

const NOPERM_KEY =
  'NOPERM this user has no permissions to access one of the keys used as arguments';
const NOPERM_SET = "NOPERM this user has no permissions to run the 'set' command";

async function settle(promise) {
  try {
    return await promise;
  } catch (e) {
    return e;
  }
}

test('ioredis with username and password', async () => {
  for (const [kind, s] of Object.entries(servers)) {
    const r = new Redis({ port: s.port, username: 'reader', password: 'readpass' });
    const got = plain([await settle(r.get('rl:a')), await settle(r.get('other')),
                       await settle(r.set('rl:a', 'x')), await settle(r.call('ACL', 'WHOAMI'))]);
    r.disconnect();
    assert.deepEqual(got, [null, { error: NOPERM_KEY }, { error: NOPERM_SET },
      { error: "NOPERM this user has no permissions to run the 'acl|whoami' command" }], kind);
  }
});

test('node-redis with username and password; a wrong password is refused', async () => {
  for (const [kind, s] of Object.entries(servers)) {
    const c = createClient({ socket: { port: s.port }, username: 'reader', password: 'readpass' });
    await c.connect();
    const got = plain([await settle(c.get('rl:a')), await settle(c.get('other'))]);
    await c.quit();
    assert.deepEqual(got, [null, { error: NOPERM_KEY }], kind);
    const bad = createClient({ socket: { port: s.port, reconnectStrategy: false },
                               username: 'reader', password: 'wrong' });
    bad.on('error', () => {});
    const err = await settle(bad.connect());
    assert.match(String(err && err.message), /WRONGPASS invalid username-password pair/, kind);
    await settle(bad.disconnect());
  }
});

test('a GCRA.TAKE-only limiter user (Sluice)', async () => {
  const admin = new Redis(servers.sluice.port);
  await admin.call('ACL', 'SETUSER', 'limiter', 'on', '>limpass', '~rl:*', '-@all', '+gcra.take');
  admin.disconnect();
  const r = new Redis({ port: servers.sluice.port, username: 'limiter', password: 'limpass' });
  const taken = await r.call('GCRA.TAKE', 'rl:node', '10', '1s');
  assert.equal(taken[0], 1);
  assert.deepEqual(plain(await settle(r.call('GCRA.TAKE', 'other', '10', '1s'))),
                   { error: NOPERM_KEY });
  assert.deepEqual(plain(await settle(r.get('rl:node'))),
                   { error: "NOPERM this user has no permissions to run the 'get' command" });
  r.disconnect();
});
