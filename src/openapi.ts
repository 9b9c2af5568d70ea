import { STATUS_CODES } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  DocumentBuilder,
  getSchemaPath,
  SwaggerModule,
  type OpenAPIObject,
  type OperationObject,
} from '@nestjs/swagger';
import { PUBLIC_SECURITY } from './auth/auth.decorators.js';
import { errorBody } from './common/all-exceptions.filter.js';
import { addErrorResponses, EXAMPLE_ID, type DocumentedError } from './common/api-errors.js';
import { AppException } from './common/app.exception.js';
import { RAW_BODY_EXTENSION } from './common/route-limits.js';
import { ERROR_DETAIL_MODELS, ErrorBodyDto } from './common/error-body.dto.js';
import { starting, unavailable } from './common/unavailable.js';
import { SERVICE_NAME, SERVICE_VERSION } from './config/service-info.js';
import { EVENT_BODIES, eventCallbacks } from './events/dto/event-payloads.dto.js';

/** Each tag the controllers use, with what it groups. */
const TAGS: Record<string, string> = {
  'admin: auth': 'The admin login, whose JWT the other admin routes take',
  'admin: instances': 'Connected business phone numbers, each with its encrypted access token',
  'admin: api keys': 'The API keys clients use; each is shown once',
  'admin: overview': 'The health of the dependencies and what is waiting, on one page',
  'admin: turns': "The agent's turns: a contact's messages given to the agent, and its answer",
  'admin: event subscriptions':
    'Client systems subscribed to events (messages, statuses, templates, turns, instances), ' +
    'sent as signed, retried webhooks; their deliveries, retries and replays',
  'phone numbers': "An instance's phone numbers: list, register, request and verify a code",
  send: 'Send every message type the platform offers (API key)',
  messages: 'Messages sent and received, read back by wamid',
  contacts:
    "An instance's contacts and their conversations; a person takes a contact over from the agent (handoff)",
  media: 'Upload media for sends; download media users sent',
  webhook: "The platform's webhook: subscription check and signed deliveries",
  health: 'Kubernetes probes',
  operations: 'Prometheus metrics',
};

/** The errors every route of a security scheme may answer, beside its own. */
const SCHEME_ERRORS: Record<string, DocumentedError[]> = {
  'admin-jwt': [
    { error: new AppException('unauthorized', 'Missing, invalid or expired admin token') },
    { error: unavailable() },
  ],
  'api-key': [
    {
      error: AppException.validation([
        { field: 'instance_id', message: 'is required (this API key is not bound to an instance)' },
      ]),
      summary: 'no instance_id, with a key bound to none',
    },
    { error: new AppException('unauthorized', 'Unknown or revoked API key') },
    {
      error: new AppException('unauthorized', 'Missing API key (Authorization: Bearer <key>)'),
      summary: 'no API key',
    },
    {
      error: new AppException('instance_forbidden', 'This API key is bound to another instance'),
    },
    {
      error: new AppException('instance_not_found', `Instance ${EXAMPLE_ID} not found`),
      summary: 'instance_id names no instance',
    },
    {
      error: new AppException('instance_inactive', `Instance ${EXAMPLE_ID} is deactivated`),
    },
    {
      error: new AppException(
        'rate_limited',
        'This API key is over its limit of 160 requests per second; retry in 1 s',
      ),
      summary: 'the API key is over API_KEY_RATE_LIMIT',
    },
    { error: unavailable() },
  ],
};

/** What a person's token may also be answered on the inbox's reads (both schemes). */
const PERSON_ERRORS: DocumentedError[] = [
  {
    error: new AppException(
      'instance_forbidden',
      `This account does not answer for instance ${EXAMPLE_ID}`,
    ),
    summary: "an operator's token for another instance",
  },
  {
    error: AppException.validation([
      { field: 'instance_id', message: 'is required (this account answers for several instances)' },
    ]),
    summary: 'no instance_id, from an operator of several instances',
  },
  {
    error: new AppException(
      'rate_limited',
      'This account is over its limit of 160 requests per second; retry in 1 s',
    ),
    summary: "a person's token over API_KEY_RATE_LIMIT",
  },
];

/**
 * What every route but the health probes answers while the process waits, at
 * start, for PostgreSQL or Redis to answer (src/startup/standby.ts).
 */
const STARTING: DocumentedError = {
  error: starting(['PostgreSQL']),
  summary: 'the process is starting and waits for PostgreSQL or Redis',
};

const INVALID_JSON: DocumentedError = {
  error: new AppException('invalid_json', 'The request body is not valid JSON'),
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const lowerFirst = (word: string): string => word.charAt(0).toLowerCase() + word.slice(1);
const upperFirst = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * An operation's id when its route names none: the controller's and the
 * method's names (`SendController.text` → `sendText`).
 */
export function operationIdFor(controllerKey: string, methodKey: string): string {
  return `${lowerFirst(controllerKey.replace(/Controller$/, ''))}${upperFirst(methodKey)}`;
}

/**
 * `security: []` for public routes; the errors of the route's security scheme
 * and of a JSON body; a description for every response.
 */
function completeOperation(path: string, operation: OperationObject): void {
  // A route's decorator may name a scheme its class names too (@InboxAuth() in an @ApiKeyAuth() class).
  if (operation.security) {
    const seen = new Set<string>();
    operation.security = operation.security.filter((requirement) => {
      const key = JSON.stringify(requirement);
      return !seen.has(key) && seen.add(key);
    });
  }
  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (schemes.includes(PUBLIC_SECURITY)) {
    if (schemes.length > 1) throw new Error(`${path} is both public and authenticated`);
    operation.security = [];
  }
  for (const [status, response] of Object.entries(operation.responses)) {
    // Nest leaves a response without a description of its own empty.
    if (response && 'description' in response && !response.description) {
      response.description = STATUS_CODES[status] ?? 'The answer';
    }
  }
  for (const scheme of schemes) addErrorResponses(operation.responses, SCHEME_ERRORS[scheme] ?? []);
  if (schemes.includes('api-key') && schemes.includes('admin-jwt')) {
    addErrorResponses(operation.responses, PERSON_ERRORS);
  }
  if (!path.startsWith('/health')) addErrorResponses(operation.responses, [STARTING]);
  const body = operation.requestBody;
  // A route that takes its body as raw bytes never parses it.
  if (
    body &&
    'content' in body &&
    body.content['application/json'] &&
    !(RAW_BODY_EXTENSION in operation)
  ) {
    addErrorResponses(operation.responses, [INVALID_JSON]);
  }
  operation.responses.default ??= {
    description: 'Any other error, in the contract body',
    content: {
      'application/json': {
        schema: { $ref: getSchemaPath(ErrorBodyDto) },
        examples: {
          internal_error: {
            summary: 'internal_error',
            value: errorBody(new AppException('internal_error', 'Internal server error')),
          },
        },
      },
    },
  };
}

/**
 * The OpenAPI document, generated from the controllers' and DTOs'
 * decorators. Every operation also answers the contract's error body.
 */
export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle(SERVICE_NAME)
    .setVersion(SERVICE_VERSION)
    .setDescription(
      'Connector between a business messaging platform, client systems and an AI agent. ' +
        'Admin routes take the JWT from POST /admin/auth/login; client routes take an API key.',
    )
    .addServer('/', 'This service')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'The token from POST /admin/auth/login',
      },
      'admin-jwt',
    )
    // Not addBearerAuth: it would call the key a JWT.
    .addSecurity('api-key', {
      type: 'http',
      scheme: 'bearer',
      description: 'An API key from POST /admin/api-keys (mck_…)',
    });
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ErrorBodyDto, ...ERROR_DETAIL_MODELS, ...Object.values(EVENT_BODIES)],
    operationIdFactory: operationIdFor,
  });
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) completeOperation(path, operation);
    }
  }
  // A form field that is JSON says so (Nest's decorators cannot state a part's encoding).
  const upload = document.paths['/campaigns/upload']?.post?.requestBody;
  const form = upload && 'content' in upload ? upload.content['multipart/form-data'] : undefined;
  if (form) form.encoding = { campaign: { contentType: 'application/json' } };
  const subscribe = document.paths['/admin/event-subscriptions']?.post;
  if (subscribe) subscribe.callbacks = eventCallbacks();
  return document;
}

/** Swagger UI at /docs and the document at /docs-json. */
export function serveOpenApi(app: NestFastifyApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
  });
}
