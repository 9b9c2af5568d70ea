/**
 * What a route may declare with `@RouteConfig()` (Fastify's route config),
 * applied when the route is registered (see app.setup.ts).
 */
export interface RouteLimits {
  /** This route's body limit, over the global one. */
  bodyLimit?: number;
}
