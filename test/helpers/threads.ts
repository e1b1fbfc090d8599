// This process's threads as Linux lists them, with the nice value each runs at: what the tests of
// the thread priorities (THREAD_POOL_NICE, the Parquet and rollup threads) read.
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadInfo {
  task: number;
  name: string;
  nice: number;
}

/** Name and nice value (field 19 of /proc/<pid>/task/<tid>/stat) of every thread of this process; Linux only. */
export function threads(): ThreadInfo[] {
  return readdirSync('/proc/self/task').flatMap((task) => {
    try {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ task: Number(task), name: readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim(), nice: Number(fields[16]) }];
    } catch {
      return [];
    }
  });
}
