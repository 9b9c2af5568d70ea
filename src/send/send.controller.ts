import { applyDecorators, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { PersonRef } from '../accounts/account.types.js';
import { InboxAuth } from '../auth/auth.decorators.js';
import { CallingPerson, ClientInstance } from '../auth/client-context.js';
import { ApiErrors } from '../common/api-errors.js';
import { AppValidationPipe } from '../common/validation.js';
import type { Instance } from '../instances/instance.types.js';
import { INTERACTIVE_BODY_SCHEMA, INTERACTIVE_FORMS } from './dto/interactive-forms.dto.js';
import { SendResultDto } from './dto/send-result.dto.js';
import { sendErrors } from './send-error-examples.js';
import { INTERACTIVE_EXAMPLES, SEND_EXAMPLES } from './send-examples.js';
import { SEND_DTO_CLASSES, type SendKind, type SendRequests } from './send-kinds.js';
import { SendService } from './send.service.js';

/** Worked examples of a kind's body, as Swagger UI offers them. */
function examples(kind: SendKind): Record<string, { value: Record<string, unknown> }> {
  const named = kind === 'interactive' ? INTERACTIVE_EXAMPLES : { [kind]: SEND_EXAMPLES[kind] };
  return Object.fromEntries(Object.entries(named).map(([name, value]) => [name, { value }]));
}

/** What each route does, in its operation's summary. */
const SUMMARIES: Record<SendKind, string> = {
  text: 'Send a text message',
  image: 'Send an image',
  document: 'Send a document',
  audio: 'Send an audio message',
  video: 'Send a video',
  sticker: 'Send a sticker',
  location: 'Send a location',
  contacts: 'Send contact cards',
  reaction: 'React to a message (an empty emoji removes the reaction)',
  template: 'Send an approved template (also outside the 24-hour window)',
  interactive: 'Send reply buttons, a list or a call-to-action URL',
};

/** `sendText`, `sendCtaUrl`…: the operation id of `POST /send/{kind}`. */
function operationId(kind: SendKind): string {
  return `send${kind.replace(/(^|_)(\w)/g, (_match, _sep, letter: string) => letter.toUpperCase())}`;
}

/**
 * `POST /send/{kind}`: its body (the interactive one as one of its three
 * forms) and examples documented, 200 with the wamid, and its errors.
 */
function SendRoute(kind: SendKind): MethodDecorator {
  const body =
    kind === 'interactive'
      ? ApiBody({ schema: INTERACTIVE_BODY_SCHEMA, examples: examples(kind) })
      : ApiBody({ type: SEND_DTO_CLASSES[kind], examples: examples(kind) });
  return applyDecorators(
    Post(kind),
    HttpCode(200),
    ApiOperation({ operationId: operationId(kind), summary: SUMMARIES[kind] }),
    body,
    ApiOkResponse({ type: SendResultDto }),
    ApiErrors(...sendErrors(kind)),
  );
}

/** The body of `POST /send/{kind}`, validated as the kind's class (the signature cannot name it). */
function SendBody(kind: SendKind): ParameterDecorator {
  return Body(new AppValidationPipe(SEND_DTO_CLASSES[kind]));
}

type Dto<K extends SendKind> = SendRequests[K];

/** One handler per kind (each a route of its own in the API description); all take the same path. */
@ApiTags('send')
@InboxAuth()
@ApiExtraModels(...Object.values(INTERACTIVE_FORMS))
@Controller('send')
export class SendController {
  constructor(private readonly sender: SendService) {}

  private async send<K extends SendKind>(
    instance: Instance,
    kind: K,
    dto: Dto<K>,
    person: PersonRef | null,
  ): Promise<SendResultDto> {
    const wamid = await this.sender.send(instance, kind, dto, person ? { person } : undefined);
    return { success: true, wamid };
  }

  @SendRoute('text')
  text(
    @SendBody('text') dto: Dto<'text'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'text', dto, person);
  }

  @SendRoute('image')
  image(
    @SendBody('image') dto: Dto<'image'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'image', dto, person);
  }

  @SendRoute('document')
  document(
    @SendBody('document') dto: Dto<'document'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'document', dto, person);
  }

  @SendRoute('audio')
  audio(
    @SendBody('audio') dto: Dto<'audio'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'audio', dto, person);
  }

  @SendRoute('video')
  video(
    @SendBody('video') dto: Dto<'video'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'video', dto, person);
  }

  @SendRoute('sticker')
  sticker(
    @SendBody('sticker') dto: Dto<'sticker'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'sticker', dto, person);
  }

  @SendRoute('location')
  location(
    @SendBody('location') dto: Dto<'location'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'location', dto, person);
  }

  @SendRoute('contacts')
  contacts(
    @SendBody('contacts') dto: Dto<'contacts'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'contacts', dto, person);
  }

  @SendRoute('reaction')
  reaction(
    @SendBody('reaction') dto: Dto<'reaction'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'reaction', dto, person);
  }

  @SendRoute('template')
  template(
    @SendBody('template') dto: Dto<'template'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'template', dto, person);
  }

  @SendRoute('interactive')
  interactive(
    @SendBody('interactive') dto: Dto<'interactive'>,
    @ClientInstance() instance: Instance,
    @CallingPerson() person: PersonRef | null,
  ): Promise<SendResultDto> {
    return this.send(instance, 'interactive', dto, person);
  }
}
