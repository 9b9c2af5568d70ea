/**
 * What a route may declare with `@RouteConfig()` (Fastify's route config),
 * applied when the route is registered or its body read (see app.setup.ts).
 */
export interface RouteLimits {
  /** This route's body limit, over the global one. */
  bodyLimit?: number;
  /**
   * A body refused before it was read (over the limit, a type no parser
   * takes) is read and thrown away up to this many bytes (and for
   * REFUSED_BODY_DISCARD_MS at most), so a sender that writes the whole body
   * before reading reads the answer. Without it the answer closes the
   * connection at once: no unauthenticated client gets the process to read
   * megabytes it refused.
   */
  refusedBodyDiscard?: number;
  /**
   * The JSON body is kept as received (`rawBody`) and never parsed: the route
   * reads only the bytes (the webhook checks their signature; workers parse).
   * Its OpenAPI operation says so too: `@ApiExtension(RAW_BODY_EXTENSION, true)`.
   */
  rawBodyOnly?: boolean;
  /** `@fastify/helmet`'s per-route switch: `{ skipRoute: true }` sends no security headers. */
  helmet?: { skipRoute: true };
}

/** The OpenAPI extension of an operation whose JSON body is read as bytes (no `invalid_json`). */
export const RAW_BODY_EXTENSION = 'x-raw-body';
