// Starts real servers for the Node.js black-box tests: sluice-server (SLUICE_SERVER) and the
// reference redis-server 7.0.x (REDIS_SERVER or redis-server on PATH), each on a free loopback
// port in its own temporary directory, stopped (and the directory removed) by stop().
// SLUICE_TARGET=redis (for startTargets) runs the reference alone: it proves the expected values
// written in a test are Redis's own.

import assert from 'node:assert/strict';
import { before, after } from 'node:test';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const START_DEADLINE_MS = 60_000;  // generous: the machine may be busy building

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.write('*1\r\n$4\r\nPING\r\n');
    });
    sock.once('data', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

function sluiceBinary() {
  const bin = process.env.SLUICE_SERVER;
  if (!bin) throw new Error('SLUICE_SERVER is not set (run through ctest)');
  fs.accessSync(bin, fs.constants.X_OK);
  return bin;
}

function redisBinary() { return process.env.REDIS_SERVER || 'redis-server'; }

// The reference's version ("7.0.15"), or null when no redis-server can be run.
export function redisVersion() {
  try {
    const out = execFileSync(redisBinary(), ['--version'], { encoding: 'utf8' });
    const m = /v=(\S+)/.exec(out);
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

// Why the side-by-side comparison cannot run here, or null when it can.
export function referenceMissing() {
  const v = redisVersion();
  if (v === null) return 'redis-server is not installed: no reference';
  if (!v.startsWith('7.0.')) return `redis-server ${v} is not 7.0.x: not the reference`;
  return null;
}

let setprivFound = null;
function hasSetpriv() {
  if (setprivFound === null) {
    try {
      execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
      setprivFound = true;
    } catch {
      setprivFound = false;
    }
  }
  return setprivFound;
}

// kind: 'sluice' | 'redis'. Resolves to { kind, port, stop() } once the server answers PING.
export async function startServer(kind, extraArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-node-${kind}-`));
  const port = await freePort();
  const args = kind === 'sluice'
    ? ['--port', `${port}`, '--bind', '127.0.0.1', '--dir', path.join(dir, 'data'),
       '--enable-debug-command', 'yes', ...extraArgs]
    : ['--port', `${port}`, '--bind', '127.0.0.1', '--dir', dir, '--save', '',
       '--appendonly', 'no', '--daemonize', 'no', ...extraArgs];
  const log = fs.openSync(path.join(dir, 'stderr.log'), 'w');
  // Through setpriv (util-linux): the kernel kills the server if this test process dies
  // without stopping it (a CI timeout, a crash); setpriv execs it, so the pid is the server's.
  const binary = kind === 'sluice' ? sluiceBinary() : redisBinary();
  const proc = hasSetpriv()
    ? spawn('setpriv', ['--pdeathsig', 'SIGKILL', '--', binary, ...args],
            { stdio: ['ignore', log, log] })
    : spawn(binary, args, { stdio: ['ignore', log, log] });
  let exited = null;
  proc.once('exit', (code, signal) => { exited = code ?? signal; });
  const logText = () => fs.readFileSync(path.join(dir, 'stderr.log'), 'utf8');
  const deadline = Date.now() + START_DEADLINE_MS;
  while (!(await canConnect(port))) {
    if (exited !== null) throw new Error(`${kind} exited (${exited}) during start:\n${logText()}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${kind} did not start within ${START_DEADLINE_MS} ms:\n${logText()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    kind,
    port,
    pid: proc.pid,  // the server's own (setpriv execs it)
    log: logText,
    // kill -9 (a machine lost): resolves once the process is gone.
    async kill9() {
      if (exited !== null) return;
      const done = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await done;
    },
    async stop() {
      if (exited === null) {
        const done = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
        await done;
        clearTimeout(timer);
      }
      fs.closeSync(log);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The servers a test module runs its scenarios on, as { sluice, redis } (either may be absent):
// both by default (Sluice alone when the reference is missing, with the reason printed), only
// the reference with SLUICE_TARGET=redis. Stop them with stopTargets().
export async function startTargets() {
  const servers = {};
  if (process.env.SLUICE_TARGET === 'redis') {
    const why = referenceMissing();
    if (why) throw new Error(`SLUICE_TARGET=redis but ${why}`);
    servers.redis = await startServer('redis');
    return servers;
  }
  servers.sluice = await startServer('sluice');
  const why = referenceMissing();
  if (why) console.log(`# no side-by-side comparison: ${why}`);
  else servers.redis = await startServer('redis');
  return servers;
}

export async function stopTargets(servers) {
  for (const s of Object.values(servers)) await s.stop();
}

// Makes client results comparable across servers: errors become { error: message }.
export function plain(value) {
  if (value instanceof Error) return { error: value.message };
  if (Array.isArray(value)) return value.map(plain);
  if (Buffer.isBuffer(value)) return value.toString('latin1');
  return value;
}

// Starts sluice-server and (when installed) the reference redis-server for the test file (node:test
// before/after hooks) and returns onBoth(scenario, expected): scenario(port) runs on each server,
// and each result, made comparable by plain(), must deep-equal `expected`.
export function sluiceAndReference() {
  const servers = {};
  before(async () => {
    servers.sluice = await startServer('sluice');
    if (!referenceMissing()) servers.redis = await startServer('redis');
  });
  after(async () => {
    for (const s of Object.values(servers)) await s.stop();
  });
  const onBoth = async (scenario, expected) => {
    for (const [kind, server] of Object.entries(servers)) {
      const got = plain(await scenario(server.port));
      assert.deepEqual(got, expected, `${kind} answered differently`);
    }
  };
  onBoth.servers = servers;  // kind ('sluice', 'redis') -> started server, once before() ran
  return onBoth;
}
