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
  /**
   * bulk (default): with units "all", every unit at once by bulk pull (GET /api/v1/sensor-data/bulk),
   * a slice of days a request; pages: unit by unit, page by page (always for a list of units)
   */
  method?: 'bulk' | 'pages';
  /** records a bulk slice holds at most (whole days; the first day always): default 500,000 */
  sliceRecords?: number;
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
