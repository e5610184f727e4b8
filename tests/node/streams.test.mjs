// Streams through ioredis and node-redis 4, as job queues and event consumers use them: XADD,
// XRANGE/XREVRANGE, XLEN, XTRIM, consumer groups (XGROUP CREATE, XREADGROUP, XACK, XPENDING,
// XCLAIM, XAUTOCLAIM, XINFO GROUPS/CONSUMERS), and a blocked XREAD woken by another client's
// XADD. Each scenario runs against sluice-server and, side by side, the reference redis-server
// 7.0.x; the results must equal the expected values written here (explicit IDs keep them fixed).

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { plain, sluiceAndReference } from './harness.mjs';

const onBoth = sluiceAndReference();

// Consumers' idle times are wall-clock: zeroed before comparing.
function withoutIdle(rows) {
  return rows.map((row) => row.map((v, i) => (row[i - 1] === 'idle' || row[i - 1] === 'inactive' ? 0 : v)));
}

describe('ioredis', () => {
  test('entries, ranges, trimming and consumer groups', async () => {
    await onBoth(async (port) => {
      const r = new Redis({ port, host: '127.0.0.1' });
      try {
        await r.del('jobs');
        const ids = [];
        for (let i = 1; i <= 5; i++) ids.push(await r.xadd('jobs', `1000-${i}`, 'job', `j${i}`, 'n', String(i)));
        const auto = await r.xadd('jobs', 'MAXLEN', '=', '10', '2000-*', 'job', 'j6');
        const range = await r.xrange('jobs', '1000-2', '1000-3');
        const rev = await r.xrevrange('jobs', '+', '-', 'COUNT', 2);
        const created = await r.xgroup('CREATE', 'jobs', 'workers', '0');
        const read1 = await r.xreadgroup('GROUP', 'workers', 'alice', 'COUNT', 2, 'STREAMS', 'jobs', '>');
        const read2 = await r.xreadgroup('GROUP', 'workers', 'bob', 'COUNT', 3, 'STREAMS', 'jobs', '>');
        const acked = await r.xack('jobs', 'workers', '1000-1', '1000-3', '9-9');
        const summary = await r.xpending('jobs', 'workers');
        const detail = (await r.xpending('jobs', 'workers', '-', '+', 10)).map((e) => [e[0], e[1], e[3]]);
        const claimed = await r.xclaim('jobs', 'workers', 'carol', 0, '1000-2', 'JUSTID');
        const autoclaimed = await r.xautoclaim('jobs', 'workers', 'dave', 0, '0-0', 'COUNT', 2);
        const groups = withoutIdle(await r.xinfo('GROUPS', 'jobs'));
        const consumers = withoutIdle(await r.xinfo('CONSUMERS', 'jobs', 'workers'));
        const trimmed = await r.xtrim('jobs', 'MINID', '1000-4');
        const len = await r.xlen('jobs');
        const wrong = plain(await r.xadd('jobs', '1-1', 'a', 'b').catch((e) => e));
        return { ids, auto, range, rev, created, read1, read2, acked, summary, detail, claimed,
                 autoclaimed, groups, consumers, trimmed, len, wrong };
      } finally {
        r.disconnect();
      }
    }, {
      ids: ['1000-1', '1000-2', '1000-3', '1000-4', '1000-5'],
      auto: '2000-0',
      range: [['1000-2', ['job', 'j2', 'n', '2']], ['1000-3', ['job', 'j3', 'n', '3']]],
      rev: [['2000-0', ['job', 'j6']], ['1000-5', ['job', 'j5', 'n', '5']]],
      created: 'OK',
      read1: [['jobs', [['1000-1', ['job', 'j1', 'n', '1']], ['1000-2', ['job', 'j2', 'n', '2']]]]],
      read2: [['jobs', [['1000-3', ['job', 'j3', 'n', '3']], ['1000-4', ['job', 'j4', 'n', '4']],
                        ['1000-5', ['job', 'j5', 'n', '5']]]]],
      acked: 2,
      summary: [3, '1000-2', '1000-5', [['alice', '1'], ['bob', '2']]],
      detail: [['1000-2', 'alice', 1], ['1000-4', 'bob', 1], ['1000-5', 'bob', 1]],
      claimed: ['1000-2'],
      autoclaimed: ['1000-5', [['1000-2', ['job', 'j2', 'n', '2']], ['1000-4', ['job', 'j4', 'n', '4']]], []],
      groups: [['name', 'workers', 'consumers', 4, 'pending', 3, 'last-delivered-id', '1000-5',
                'entries-read', 5, 'lag', 1]],
      consumers: [['name', 'alice', 'pending', 0, 'idle', 0], ['name', 'bob', 'pending', 1, 'idle', 0],
                  ['name', 'carol', 'pending', 0, 'idle', 0], ['name', 'dave', 'pending', 2, 'idle', 0]],
      trimmed: 3,
      len: 3,
      wrong: { error: 'ERR The ID specified in XADD is equal or smaller than the target stream top item' },
    });
  });

  test('a blocked XREAD is woken by another client\'s XADD', async () => {
    await onBoth(async (port) => {
      const reader = new Redis({ port, host: '127.0.0.1' });
      const writer = new Redis({ port, host: '127.0.0.1' });
      try {
        await writer.del('events');
        await writer.xadd('events', '5-1', 'old', '1');
        const pending = reader.xread('BLOCK', 10000, 'STREAMS', 'events', '$');
        // The reader is blocked once the server lists it so.
        for (;;) {
          const list = await writer.client('LIST');
          if (/cmd=xread/.test(list) && /flags=b/.test(list)) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await writer.xadd('events', '5-2', 'new', '2');
        return await pending;
      } finally {
        reader.disconnect();
        writer.disconnect();
      }
    }, [['events', [['5-2', ['new', '2']]]]]);
  });
});

describe('node-redis', () => {
  test('xAdd, xRange, xReadGroup, xAck and xPending', async () => {
    await onBoth(async (port) => {
      const c = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
      await c.connect();
      try {
        await c.del('orders');
        const added = [await c.xAdd('orders', '7-1', { item: 'a' }), await c.xAdd('orders', '7-2', { item: 'b' })];
        const range = await c.xRange('orders', '-', '+');
        await c.xGroupCreate('orders', 'billing', '0');
        const read = await c.xReadGroup('billing', 'w1', { key: 'orders', id: '>' }, { COUNT: 10 });
        const acked = await c.xAck('orders', 'billing', '7-1');
        const pending = await c.xPending('orders', 'billing');
        const len = await c.xLen('orders');
        // node-redis builds messages as null-prototype objects: compared as plain JSON.
        return JSON.parse(JSON.stringify({ added, range, read, acked, pending, len }));
      } finally {
        await c.quit();
      }
    }, {
      added: ['7-1', '7-2'],
      range: [{ id: '7-1', message: { item: 'a' } }, { id: '7-2', message: { item: 'b' } }],
      read: [{ name: 'orders', messages: [{ id: '7-1', message: { item: 'a' } }, { id: '7-2', message: { item: 'b' } }] }],
      acked: 1,
      pending: { pending: 1, firstId: '7-2', lastId: '7-2', consumers: [{ name: 'w1', deliveriesCounter: 1 }] },
      len: 2,
    });
  });
});
