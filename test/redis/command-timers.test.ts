// ioredis commands keep their shape when their timeout is cleared (src/redis/command-timers.ts):
// a command that went into dictionary mode made its objects outlive the young generation under
// load. Checked with V8's own %HasFastProperties in a child process (natives syntax is a process
// flag), on the shared Redis, for a command answered in time under the service's command timeout;
// and the patched method is the one ioredis calls (a new ioredis without it fails here).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { commandTimersPatched } from '../../src/redis/command-timers.js';

const run = promisify(execFile);

const CHILD = `
import { Command } from 'ioredis';
import { createRedis, redisReady } from './src/redis/connection.ts';
const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'shape-test');
if (!(await redisReady(redis))) throw new Error('Redis is not reachable');
const fast = (object) => %HasFastProperties(object);
const command = new Command('ping', [], { replyEncoding: 'utf8' });
const reply = await redis.sendCommand(command);
console.log(JSON.stringify({ reply, commandTimeout: redis.options.commandTimeout, fast: fast(command) }));
redis.disconnect();
`;

t.test('the method ioredis clears its timers with is the patched one', async (t) => {
  t.ok(commandTimersPatched, 'ioredis still has Command#_clearTimers: the shape-keeping version replaced it');
});

t.test('a command answered in time keeps fast properties after its timeout timer is cleared', async (t) => {
  const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '--eval', CHILD], {
    cwd: new URL('../..', import.meta.url).pathname,
    timeout: 30_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').pop()!) as { reply: string; commandTimeout: number; fast: boolean };
  t.equal(result.reply, 'PONG', 'the command was answered');
  t.ok(result.commandTimeout > 0, `it ran under the service's command timeout (${result.commandTimeout} ms)`);
  t.equal(result.fast, true, 'and its object kept fast properties (no delete)');
});
