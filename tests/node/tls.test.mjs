// TLS (issue 43) through ioredis (`tls:` options) and node-redis (`socket: { tls: true }`): a CA,
// a server and a client certificate made here with openssl; Sluice and the reference
// redis-server 7.0.x both serve TLS on a tls-port with client certificates required, and give
// the same results; a client without a certificate is refused by both.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { startServer, referenceMissing, freePort, plain } from './harness.mjs';

const missing = referenceMissing();
const servers = {};
let certs;
const file = (name) => path.join(certs, name);
const read = (name) => fs.readFileSync(file(name));

function openssl(...args) {
  execFileSync('openssl', args, { cwd: certs, stdio: 'ignore' });
}

function makeCertificates() {
  certs = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-tls-'));
  openssl('req', '-x509', '-new', '-nodes', '-newkey', 'rsa:2048', '-keyout', 'ca.key', '-out',
          'ca.crt', '-days', '3', '-subj', '/CN=Sluice node test CA');
  fs.writeFileSync(file('san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  for (const name of ['server', 'client']) {
    openssl('req', '-new', '-nodes', '-newkey', 'rsa:2048', '-keyout', `${name}.key`, '-out',
            `${name}.csr`, '-subj', `/CN=${name}`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key',
            '-CAcreateserial', '-out', `${name}.crt`, '-days', '3', '-extfile', 'san.ext');
  }
}

before(async () => {
  makeCertificates();
  for (const kind of missing ? ['sluice'] : ['sluice', 'redis']) {
    const tlsPort = await freePort();
    const s = await startServer(kind, [
      '--tls-port', `${tlsPort}`, '--tls-cert-file', file('server.crt'),
      '--tls-key-file', file('server.key'), '--tls-ca-cert-file', file('ca.crt')]);
    s.tlsPort = tlsPort;
    servers[kind] = s;
  }
  if (missing) console.log(`# no side-by-side comparison: ${missing}`);
});

after(async () => {
  for (const s of Object.values(servers)) await s.stop();
  if (certs) fs.rmSync(certs, { recursive: true, force: true });
});

async function settle(promise) {
  try {
    return await promise;
  } catch (e) {
    return e;
  }
}

test('ioredis with tls options and a client certificate', async () => {
  const results = {};
  for (const [kind, s] of Object.entries(servers)) {
    const r = new Redis({
      port: s.tlsPort, host: '127.0.0.1',
      tls: { ca: read('ca.crt'), cert: read('client.crt'), key: read('client.key'),
             servername: 'localhost' },
    });
    const pipe = r.pipeline();
    for (let i = 0; i < 1000; i++) pipe.incr('tls:n');
    const piped = await pipe.exec();
    const big = 'x'.repeat(2 << 20);
    results[kind] = plain([await r.set('tls:k', 'v'), await r.get('tls:k'),
                           piped[piped.length - 1][1], await r.set('tls:big', big),
                           (await r.get('tls:big')).length, await settle(r.call('NOSUCH'))]);
    if (kind === 'sluice') {
      const [allowed] = await r.call('GCRA.TAKE', 'rl:node', 5, 1000);
      assert.equal(allowed, 1);
    }
    r.disconnect();
  }
  assert.deepEqual(results.sluice.slice(0, 5), ['OK', 'v', 1000, 'OK', 2 << 20]);
  if (results.redis) assert.deepEqual(results.sluice, results.redis);
});

test('node-redis with socket.tls and a client certificate', async () => {
  const results = {};
  for (const [kind, s] of Object.entries(servers)) {
    const c = createClient({
      socket: { host: '127.0.0.1', port: s.tlsPort, tls: true, servername: 'localhost',
                ca: read('ca.crt'), cert: read('client.crt'), key: read('client.key') },
    });
    c.on('error', () => {});
    await c.connect();
    const multi = await c.multi().set('tls:m', '1').incr('tls:m').exec();
    results[kind] = plain([await c.ping(), multi, await c.get('tls:m')]);
    await c.quit();
  }
  assert.deepEqual(results.sluice, ['PONG', ['OK', 2], '2']);
  if (results.redis) assert.deepEqual(results.sluice, results.redis);
});

test('a client without a certificate is refused', async () => {
  for (const [kind, s] of Object.entries(servers)) {
    const c = createClient({
      socket: { host: '127.0.0.1', port: s.tlsPort, tls: true, servername: 'localhost',
                ca: read('ca.crt'), reconnectStrategy: false },
    });
    c.on('error', () => {});
    const got = await settle((async () => { await c.connect(); return c.ping(); })());
    assert.ok(got instanceof Error, `${kind}: ${got}`);
    await settle(c.disconnect());
  }
  if (servers.sluice) {
    assert.match(servers.sluice.log(),
                 /Error accepting a TLS client connection from 127\.0\.0\.1:\d+: .*certificate/);
  }
});
