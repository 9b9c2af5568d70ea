import createClient, { type Middleware } from 'openapi-fetch';
import { signal } from '@preact/signals';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];

/**
 * Set when a call answered 401: the session ended (expired, logged out
 * elsewhere, the account disabled). The app shows the login over the page,
 * keeping what was being written, and retries nothing by itself.
 */
export const sessionEnded = signal(false);

const marks: Middleware = {
  onRequest({ request }) {
    // A cookie session's changes must say they come from the console (the API refuses
    // a cookie-authenticated change without it: a cross-site form cannot add a header).
    request.headers.set('x-console', '1');
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) sessionEnded.value = true;
    return response;
  },
};

/** The service's API, typed from its own OpenAPI document (npm run console:api). */
export const api = createClient<paths>({ baseUrl: '/', credentials: 'same-origin' });
api.use(marks);

/** The error body every route answers with. */
export interface ApiError {
  statusCode: number;
  code: string;
  message: string;
  /** validation_failed: each field refused ({ field, message }); others: what the error names. */
  details?: Array<Record<string, unknown>>;
}

/** The data of an answer, or its error thrown (as an ApiError). */
export function must<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) {
    const error = (answer.error ?? {}) as Partial<ApiError>;
    throw Object.assign(new Error(error.message ?? answer.response.statusText), {
      code: error.code ?? 'unknown',
      statusCode: answer.response.status,
      details: Array.isArray(error.details) ? error.details : [],
    });
  }
  return answer.data;
}
