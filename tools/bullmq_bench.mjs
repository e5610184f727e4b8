#!/usr/bin/env node
// BullMQ throughput: sluice-server beside a local redis-server, in the same run.
//
//   SLUICE_SERVER=build/sluice-server node tools/bullmq_bench.mjs [--jobs 5000]
//       [--concurrency 16] [--repeat 3] [--limit MAX/DURATION_MS]
//
// Uses the BullMQ that tests/node's lockfile installs (tools/setup.sh runs `npm ci` there) and
// the servers as tests/node/harness.mjs starts them, with the same durability: Sluice as it
// starts by default (appendfsync everysec), Redis with appendonly yes, appendfsync everysec.
// For each server and repeat, on a fresh queue: Queue.addBulk of JOBS jobs (jobs added per
// second), then one Worker with CONCURRENCY slots (and a rate limiter `{max, duration}` with
// --limit) processing them until every job completed (jobs processed per second, from the
// worker's start to the last `completed` event). Each job's processor returns at once, so the
// rate is BullMQ's own Lua scripts and round trips: what a server costs a queue. The servers'
// CPU time (user + system, /proc) per job is printed beside each rate. Runs alternate the
// servers; the median is reported. Not a test: numbers depend on the machine.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { startServer } from '../tests/node/harness.mjs';

const require = createRequire(new URL('../tests/node/package.json', import.meta.url));
const { Queue, Worker } = require('bullmq');

function parseArgs(argv) {
  const opts = { jobs: 5000, concurrency: 16, repeat: 3, limit: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--help' || flag === '-h') {
      const text = fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n');
      console.log(text.slice(1, 16).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    }
    if (value === undefined) throw new Error(`${flag} needs a value (--help)`);
    if (flag === '--jobs') opts.jobs = Number(value);
    else if (flag === '--concurrency') opts.concurrency = Number(value);
    else if (flag === '--repeat') opts.repeat = Number(value);
    else if (flag === '--limit') {
      const [max, duration] = value.split('/').map(Number);
      if (!(max > 0 && duration > 0)) throw new Error('--limit MAX/DURATION_MS, e.g. 1000/1000');
      opts.limit = { max, duration };
    } else throw new Error(`unknown option ${flag} (--help)`);
    i++;
  }
  return opts;
}

// User + system CPU seconds of a process so far, all threads.
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop().trim().split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;  // USER_HZ is 100 on Linux
}

// One run on a fresh queue of `server` ({port, pid}); tools/pgo-train-bullmq.mjs runs it too.
export async function runOnce(server, opts, run) {
  const connection = { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
  const name = `bench${run}`;
  const queue = new Queue(name, { connection });
  await queue.waitUntilReady();
  const jobs = Array.from({ length: opts.jobs }, (_, i) => ({ name: 'j', data: { i } }));
  let cpu = cpuSeconds(server.pid);
  let t0 = performance.now();
  for (let i = 0; i < jobs.length; i += 500) await queue.addBulk(jobs.slice(i, i + 500));
  const added = opts.jobs / ((performance.now() - t0) / 1000);
  const addCpu = (cpuSeconds(server.pid) - cpu) / opts.jobs;
  let completed = 0;
  let done;
  const allDone = new Promise((r) => { done = r; });
  cpu = cpuSeconds(server.pid);
  t0 = performance.now();
  const worker = new Worker(name, async (job) => job.data.i, {
    connection, concurrency: opts.concurrency, autorun: true,
    ...(opts.limit ? { limiter: opts.limit } : {}),
  });
  worker.on('completed', () => { if (++completed === opts.jobs) done(); });
  await allDone;
  const processed = opts.jobs / ((performance.now() - t0) / 1000);
  const processCpu = (cpuSeconds(server.pid) - cpu) / opts.jobs;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return { added, addCpu, processed, processCpu };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const servers = {
    sluice: await startServer('sluice', ['--appendfsync', 'everysec']),
    redis: await startServer('redis', ['--appendonly', 'yes', '--appendfsync', 'everysec']),
  };
  for (const [kind, s] of Object.entries(servers)) {
    console.error(`${kind}: pid ${s.pid}, port ${s.port}`);  // for a profiler to attach
  }
  const runs = { sluice: [], redis: [] };
  try {
    for (let r = 0; r < opts.repeat; r++) {
      for (const kind of ['sluice', 'redis']) runs[kind].push(await runOnce(servers[kind], opts, r));
    }
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
  const limit = opts.limit ? `, limiter ${opts.limit.max}/${opts.limit.duration} ms` : '';
  console.log(`BullMQ, ${opts.jobs} jobs, worker concurrency ${opts.concurrency}${limit}, ` +
              `median of ${opts.repeat}; ${os.cpus().length} cores`);
  console.log(`${''.padEnd(28)} ${'sluice'.padStart(10)} ${'redis'.padStart(10)} ` +
              `${'ratio'.padStart(7)}   server CPU us/job: sluice, redis`);
  for (const [title, rate, cpu] of [['jobs added/s (addBulk)', 'added', 'addCpu'],
                                    ['jobs processed/s (Worker)', 'processed', 'processCpu']]) {
    const s = median(runs.sluice.map((x) => x[rate]));
    const r = median(runs.redis.map((x) => x[rate]));
    const sc = median(runs.sluice.map((x) => x[cpu])) * 1e6;
    const rc = median(runs.redis.map((x) => x[cpu])) * 1e6;
    console.log(`${title.padEnd(28)} ${s.toFixed(0).padStart(10)} ${r.toFixed(0).padStart(10)} ` +
                `${(s / r).toFixed(2).padStart(6)}x   ${sc.toFixed(0).padStart(6)} ` +
                `${rc.toFixed(0).padStart(6)}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => { console.error(e); process.exit(1); });
}
