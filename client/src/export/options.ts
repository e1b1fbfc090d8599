// What an export is asked for and what it reports back: the public shapes of exportSensorHistory
// (index.ts re-exports them), kept apart so the steps in the other files can name them too.
import type { Aggregation, ExportFormat } from './plan.js';

export interface ExportOptions {
  /** recorded in the checkpoint: a re-run against another service does not continue this one */
  baseUrl: string;
  from: string;
  to: string;
  aggregation: Aggregation;
  units: 'all' | number[];
  format: ExportFormat;
  outDir: string;
  /** records per request, 1..1000; default 1000 (the fewest requests out of the budget) */
  pageSize?: number;
  /** units read at once; default 4 */
  concurrency?: number;
  signal?: AbortSignal;
  onProgress?: (progress: ExportProgress) => void;
  /** a line worth showing: units found, a file resumed */
  onNotice?: (line: string) => void;
  /** between a page's records reaching its file and the checkpoint counting them (tests crash here) */
  onPageWritten?: (page: { unitId: number; page: number; records: number }) => void | Promise<void>;
}

export interface ExportProgress {
  /** records in the files, earlier runs included */
  records: number;
  /** estimate of all records, once a first page told a total (null before) */
  estimatedTotal: number | null;
  /** requests of this run that answered (unit discovery included) */
  pages: number;
  unitsDone: number;
  unitsTotal: number;
}

export interface ExportSummary {
  units: number[];
  unitsFrom: string;
  files: string[];
  records: number;
  /** records written by this run */
  recordsThisRun: number;
  pages: number;
  resumed: boolean;
  /** the checkpoint said complete: nothing was fetched */
  alreadyComplete: boolean;
}
