// A request the reference refuses (401, 403, 404, 429): the error handler answers it with the
// project's error envelope instead of a 500.
export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}
