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
  media_link_refused: 403,
  not_found: 404,
  instance_not_found: 404,
  api_key_not_found: 404,
  account_not_found: 404,
  message_not_found: 404,
  turn_not_found: 404,
  event_subscription_not_found: 404,
  event_delivery_not_found: 404,
  contact_not_found: 404,
  template_id_not_found: 404,
  campaign_not_found: 404,
  method_not_allowed: 405,
  instance_inactive: 409,
  instance_exists: 409,
  account_exists: 409,
  turn_not_retryable: 409,
  event_subscription_limit: 409,
  event_replay_running: 409,
  campaign_state_conflict: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  service_window_closed: 422,
  event_target_refused: 422,
  event_replay_timeout: 422,
  contact_opted_out: 422,
  template_not_found: 422,
  template_not_approved: 422,
  template_parameter_mismatch: 422,
  template_text_too_long: 422,
  template_policy_violation: 422,
  platform_rejected: 422,
  rate_limited: 429,
  platform_rate_limited: 429,
  internal_error: 500,
  platform_unavailable: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** When each code is answered: the API description's words for it (contract §3). */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  validation_failed: 'a body, query or path value breaks a rule; `details` names every field',
  invalid_json: 'the body is not JSON',
  unauthorized: 'credentials missing, malformed, unknown, revoked or expired',
  invalid_credentials: 'login with a wrong username or password',
  invalid_signature: 'a webhook delivery with a missing or wrong x-hub-signature-256',
  forbidden:
    "the queue dashboard refused a change from another page, or an operator's token on a route for admins",
  instance_forbidden:
    "an API key bound to one instance used for another, or an operator's token for an instance it does not answer for",
  invalid_verify_token: 'the webhook subscription check with a wrong verify token',
  not_found: 'no such route or resource',
  instance_not_found: 'no instance with that id',
  api_key_not_found: 'no API key with that id',
  account_not_found: 'no account with that id',
  message_not_found: 'no message with that wamid for the instance',
  turn_not_found: 'no turn with that id',
  event_subscription_not_found: 'no event subscription with that id',
  event_delivery_not_found: 'no event delivery with that id',
  contact_not_found: 'no contact with that number or user id for the instance',
  campaign_not_found: 'no campaign with that id on the instance',
  template_id_not_found:
    "no template with that id in the catalogue of the instance's business account",
  method_not_allowed: 'the route does not take that method',
  instance_inactive: 'the instance is deactivated',
  instance_exists: 'an instance for that phone_number_id exists already',
  account_exists:
    'an account with that username (in any case) exists already, or it is ADMIN_USERNAME',
  turn_not_retryable: 'only a failed turn, not being worked on, can be retried',
  event_subscription_limit: 'the instance has EVENT_SUBSCRIPTIONS_MAX event subscriptions already',
  event_replay_running:
    'a replay of the event subscription is running already; send another once it has answered',
  campaign_state_conflict:
    'a campaign action its state does not allow (start a draft; pause a scheduled or running one; resume a paused one; cancel one that has not ended); `details` gives its state',
  media_link_refused:
    'a signed media link from the agent payload that is not valid, has expired or was used already',
  request_timeout:
    'an upload whose client stopped sending it for longer than PLATFORM_TIMEOUT_MS (the platform was not at fault)',
  payload_too_large: 'the body or upload is over its limit (the message says the limit)',
  unsupported_media_type: 'an upload of a type the platform does not take',
  service_window_closed:
    'a non-template send to a contact with no inbound message in the last 24 hours',
  contact_opted_out:
    'a non-template send to a contact who opted out with a stop word (until they opt in again), or a marketing template to a customer who stopped marketing messages in the app',
  event_target_refused:
    'an event subscription URL that is not https in production, or resolves to a loopback, private, link-local or metadata address',
  event_replay_timeout:
    'an event replay did not finish within EVENT_REPLAY_TIMEOUT_MS and was rolled back (nothing queued): replay a shorter range',
  template_not_found:
    "a template send (or a campaign) naming a template the catalogue lacks in that language; `details` lists the languages it has. Also the platform's 132001",
  template_not_approved:
    "a template send to a template that is not approved (paused, disabled, pending, rejected); `details` gives its status. Also the platform's 132015 (paused) and 132016 (disabled)",
  template_parameter_mismatch:
    "the platform's 132000 (parameter count) or 132012 (parameter format)",
  template_text_too_long: "the platform's 132005: the text with the parameters put in is too long",
  template_policy_violation:
    "the platform's 132007: the content breaks the platform's format policy",
  platform_rejected:
    'the platform refused the request; `details` carries its code, message and fbtrace_id',
  rate_limited:
    "too many requests (an API key's or a person's token, failed logins, verification codes); see Retry-After",
  platform_rate_limited: 'the platform throttles the number; see Retry-After',
  internal_error: 'anything else; the log holds the detail under the request id',
  platform_unavailable: 'the platform failed (5xx, timeout, connection) after retries',
  unavailable: 'PostgreSQL or Redis cannot be reached now; see Retry-After',
};
