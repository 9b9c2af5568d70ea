/** Error codes of the contract (section 3), each with its HTTP status. */
export const ERROR_STATUS = {
  validation_failed: 400,
  invalid_json: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  invalid_signature: 401,
  forbidden: 403,
  instance_forbidden: 403,
  invalid_verify_token: 403,
  not_found: 404,
  instance_not_found: 404,
  api_key_not_found: 404,
  message_not_found: 404,
  method_not_allowed: 405,
  instance_inactive: 409,
  instance_exists: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  service_window_closed: 422,
  platform_rejected: 422,
  rate_limited: 429,
  platform_rate_limited: 429,
  internal_error: 500,
  platform_unavailable: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
