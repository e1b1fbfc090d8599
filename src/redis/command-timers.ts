// ioredis (5.x) ends a command's timers with `delete this._commandTimeoutTimer` (and the blocking
// one alike). Deleting a property turns the command into a dictionary-mode object, and under load
// that alone made every command's objects (its arguments, reply and promise callbacks, and what
// awaits them) survive the young-generation collections and be promoted, to be freed only by full
// collections: part of the garbage collector's share of the cheapest page's CPU (bench P1,
// small-page; src/db/deadline-client.ts has the same story for pg). This replaces the method with
// one that assigns undefined instead: ioredis only tests these fields for truthiness, so commands
// time out exactly as before (test/operations/redis-outage.test.ts), and keep their shape
// (test/redis/command-timers.test.ts). Applied once, on import; a version of ioredis without the
// method is left alone (the test then fails and says so).
import { Command } from 'ioredis';

interface CommandTimers {
  _clearTimers?: () => void;
  _commandTimeoutTimer?: NodeJS.Timeout;
  _blockingTimeoutTimer?: NodeJS.Timeout;
}

const prototype = Command.prototype as unknown as CommandTimers;

export const commandTimersPatched = typeof prototype._clearTimers === 'function';

if (commandTimersPatched) {
  prototype._clearTimers = function clearTimers(this: CommandTimers) {
    if (this._commandTimeoutTimer) {
      clearTimeout(this._commandTimeoutTimer);
      this._commandTimeoutTimer = undefined;
    }
    if (this._blockingTimeoutTimer) {
      clearTimeout(this._blockingTimeoutTimer);
      this._blockingTimeoutTimer = undefined;
    }
  };
}
