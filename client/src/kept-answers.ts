// Conditional requests: the last answers of the data endpoints' GETs, kept by URL with their ETag,
// so that the next GET of the URL sends If-None-Match and a 304 (which the service does not count
// against the rate limit) returns the kept answer. Bounded in entries and in characters.
import { DATA_PATHS, SENSOR_CHANGES_PATH } from './types.js';

/** Answers of data endpoints a client keeps for conditional requests, by URL. */
export const DEFAULT_CONDITIONAL_CACHE = 32;
/** What those answers may hold in all, in characters (a 1,000-record page is 120-150 k): the least recently used go first. */
const CONDITIONAL_CACHE_CHARACTERS = 16 * 1024 * 1024;
/** The GETs that answer with an ETag and take If-None-Match. */
export const CONDITIONAL_PATHS: ReadonlySet<string> = new Set([...Object.values(DATA_PATHS), SENSOR_CHANGES_PATH]);

/** An answer kept for a conditional request: its ETag and its body as it came. */
export interface KeptAnswer {
  etag: string;
  text: string;
}

/** The last answers of GETs by URL, least recently used first out: at most `entries`, and CONDITIONAL_CACHE_CHARACTERS in all. */
export class KeptAnswers {
  private readonly answers = new Map<string, KeptAnswer>();
  private characters = 0;

  constructor(private readonly entries: number) {}

  get(url: string): KeptAnswer | undefined {
    const answer = this.answers.get(url);
    if (answer) {
      this.answers.delete(url);
      this.answers.set(url, answer);
    }
    return answer;
  }

  /** Keeps an answer with its ETag; one without (or too big to keep) is forgotten. */
  keep(url: string, etag: string | null, text: string): void {
    this.forget(url);
    if (etag === null || this.entries <= 0 || text.length > CONDITIONAL_CACHE_CHARACTERS / 4) return;
    this.answers.set(url, { etag, text });
    this.characters += text.length;
    for (const [oldest, answer] of this.answers) {
      if (this.answers.size <= this.entries && this.characters <= CONDITIONAL_CACHE_CHARACTERS) break;
      this.answers.delete(oldest);
      this.characters -= answer.text.length;
    }
  }

  private forget(url: string): void {
    const answer = this.answers.get(url);
    if (!answer) return;
    this.answers.delete(url);
    this.characters -= answer.text.length;
  }
}
