// BullMQ's part of tools/pgo-train.sh: one run of tools/bullmq_bench.mjs against the server at
// PORT (process PID): JOBS jobs added in bulk to a fresh queue, then processed by one Worker with
// 16 slots (the queue's Lua scripts: addJob, moveToActive, moveToFinished, the events stream).
//
//   node tools/pgo-train-bullmq.mjs PORT PID JOBS
import { runOnce } from './bullmq_bench.mjs';

const [port, pid, jobs] = process.argv.slice(2).map(Number);
if (!(port > 0 && pid > 0 && jobs > 0)) {
  console.error('usage: node tools/pgo-train-bullmq.mjs PORT PID JOBS');
  process.exit(2);
}
const r = await runOnce({ port, pid }, { jobs, concurrency: 16, limit: null }, 0);
console.log(`pgo-train: BullMQ processed ${jobs} jobs (${r.processed.toFixed(0)} per second)`);
