// BullMQ (its queues are Lua scripts over lists, sorted sets, hashes and streams; every queue
// event is an XADD) run unchanged on sluice-server and, side by side, on the reference
// redis-server 7.0.x: a rate-limited worker (`limiter: {max, duration}`), delayed jobs, retries
// with backoff and a flow (parent and child). Both servers must give the expected outcomes,
// and the limiter must hold its rate (at most `max` jobs started in any `duration` window).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Queue, Worker, FlowProducer, QueueEvents } from 'bullmq';
import { startServer, referenceMissing } from './harness.mjs';

const missing = referenceMissing();
const servers = {};

before(async () => {
  servers.sluice = await startServer('sluice');
  if (!missing) servers.redis = await startServer('redis');
});

after(async () => {
  for (const s of Object.values(servers)) await s.stop();
});

const MAX = 5;
const DURATION = 1000;

async function runQueue(port) {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queue = new Queue('q', { connection });
  const events = new QueueEvents('q', { connection });
  await events.waitUntilReady();
  const started = [];
  const t0 = Date.now();
  const worker = new Worker('q', async (job) => {
    started.push(Date.now() - t0);
    if (job.data.fail && job.attemptsMade < 2) throw new Error('boom');
    return job.data.v * 2;
  }, { connection, limiter: { max: MAX, duration: DURATION } });
  const flow = new FlowProducer({ connection });
  const completedEvents = [];
  events.on('completed', ({ jobId }) => completedEvents.push(jobId));
  try {
    for (let i = 0; i < 10; i++) await queue.add('j' + i, { v: i });
    const delayed = await queue.add('delayed', { v: 100 }, { delay: 300 });
    const retry = await queue.add('retry', { v: 7, fail: true },
                                  { attempts: 3, backoff: { type: 'fixed', delay: 100 } });
    const tree = await flow.add({ name: 'parent', queueName: 'q', data: { v: 1 },
                                  children: [{ name: 'child', queueName: 'q', data: { v: 2 } }] });
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline) {
      const c = await queue.getJobCounts('completed');
      if (c.completed === 14) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const counts = await queue.getJobCounts();
    const done = await queue.getJobs(['completed'], 0, -1);
    const values = Object.fromEntries(done.map((j) => [j.name, j.returnvalue]));
    const retried = await queue.getJob(retry.id);
    const parent = await queue.getJob(tree.job.id);
    // The limiter's window: no more than MAX starts within any DURATION (small slack for timers).
    const sorted = [...started].sort((a, b) => a - b);
    let maxInWindow = 0;
    for (let i = 0; i < sorted.length; i++) {
      let n = 0;
      for (let j = i; j < sorted.length && sorted[j] - sorted[i] < DURATION - 50; j++) n++;
      maxInWindow = Math.max(maxInWindow, n);
    }
    while (completedEvents.length < 14 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return {
      counts, values, attempts: retried.attemptsMade,
      delayedDone: (await queue.getJob(delayed.id)).finishedOn !== undefined,
      childrenValues: await parent.getChildrenValues(),
      maxInWindow, events: completedEvents.length,
    };
  } finally {
    await worker.close();
    await flow.close();
    await events.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

test('a rate-limited worker, delayed jobs, retries with backoff and a flow', async () => {
  for (const [kind, server] of Object.entries(servers)) {
    const got = await runQueue(server.port);
    assert.deepEqual(got.counts, { active: 0, completed: 14, delayed: 0, failed: 0, paused: 0,
                                   prioritized: 0, waiting: 0, 'waiting-children': 0 }, kind);
    assert.deepEqual(got.values, { j0: 0, j1: 2, j2: 4, j3: 6, j4: 8, j5: 10, j6: 12, j7: 14,
                                   j8: 16, j9: 18, delayed: 200, retry: 14, parent: 2,
                                   child: 4 }, kind);
    assert.equal(got.attempts, 3, kind);
    assert.equal(got.delayedDone, true, kind);
    assert.deepEqual(Object.values(got.childrenValues), [4], kind);
    assert.ok(got.maxInWindow <= MAX, `${kind}: ${got.maxInWindow} jobs in one window`);
    assert.equal(got.events, 14, `${kind}: completed events through the events stream`);
  }
});
