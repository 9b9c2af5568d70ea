/** One attempt of a platform call, as metrics see it. */
export interface PlatformCallOutcome {
  /** The path with its first id replaced, e.g. `/{id}/messages`. */
  endpoint: string;
  /** `2xx`, the HTTP status, or the network error code. */
  status: string;
  /** The platform's error code, or '' on success. */
  code: string;
  seconds: number;
}

/** Told of every platform call attempt (the metrics module provides it). */
export interface PlatformCallObserver {
  platformCall(outcome: PlatformCallOutcome): void;
}

export const PLATFORM_CALL_OBSERVER = Symbol('PLATFORM_CALL_OBSERVER');
