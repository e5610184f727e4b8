// BullMQ's part of tools/pgo-train.sh: JOBS jobs added in bulk to a fresh queue on the server at
// PORT, then processed by one Worker with 16 slots, as tools/bullmq_bench.mjs does (the queue's
// Lua scripts: addJob, moveToActive, moveToFinished, and the events stream).
//
//   node tools/pgo-train-bullmq.mjs PORT JOBS
import { createRequire } from 'node:module';

const require = createRequire(new URL('../tests/node/package.json', import.meta.url));
const { Queue, Worker } = require('bullmq');

const [port, jobs] = process.argv.slice(2).map(Number);
if (!(port > 0 && jobs > 0)) {
  console.error('usage: node tools/pgo-train-bullmq.mjs PORT JOBS');
  process.exit(2);
}
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const queue = new Queue('pgo-train', { connection });
const batch = Array.from({ length: jobs }, (_, i) => ({ name: 'j', data: { i } }));
for (let i = 0; i < batch.length; i += 500) await queue.addBulk(batch.slice(i, i + 500));
let completed = 0;
await new Promise((resolve, reject) => {
  const worker = new Worker('pgo-train', async (job) => job.data.i, { connection, concurrency: 16 });
  worker.on('completed', () => { if (++completed === jobs) worker.close().then(resolve, reject); });
  worker.on('error', reject);
});
await queue.obliterate({ force: true });
await queue.close();
console.log(`pgo-train: BullMQ processed ${completed} jobs`);
