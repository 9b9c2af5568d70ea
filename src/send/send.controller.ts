import { applyDecorators, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth } from '../auth/auth.decorators.js';
import { ClientInstance } from '../auth/client-context.js';
import { AppValidationPipe } from '../common/validation.js';
import type { Instance } from '../instances/instance.types.js';
import { SendResultDto } from './dto/send-result.dto.js';
import { INTERACTIVE_EXAMPLES, SEND_EXAMPLES } from './send-examples.js';
import { SEND_DTO_CLASSES, type SendKind, type SendRequests } from './send-kinds.js';
import { SendService } from './send.service.js';

/** Worked examples of a kind's body, as Swagger UI offers them. */
function examples(kind: SendKind): Record<string, { value: Record<string, unknown> }> {
  const named = kind === 'interactive' ? INTERACTIVE_EXAMPLES : { [kind]: SEND_EXAMPLES[kind] };
  return Object.fromEntries(Object.entries(named).map(([name, value]) => [name, { value }]));
}

/** `POST /send/{kind}`: its body class and examples documented, 200 with the wamid. */
function SendRoute(kind: SendKind): MethodDecorator {
  return applyDecorators(
    Post(kind),
    HttpCode(200),
    ApiBody({ type: SEND_DTO_CLASSES[kind], examples: examples(kind) }),
    ApiOkResponse({ type: SendResultDto }),
  );
}

/** The body of `POST /send/{kind}`, validated as the kind's class (the signature cannot name it). */
function SendBody(kind: SendKind): ParameterDecorator {
  return Body(new AppValidationPipe(SEND_DTO_CLASSES[kind]));
}

type Dto<K extends SendKind> = SendRequests[K];

/** One handler per kind (each a route of its own in the API description); all take the same path. */
@ApiTags('send')
@ApiKeyAuth()
@Controller('send')
export class SendController {
  constructor(private readonly sender: SendService) {}

  private async send<K extends SendKind>(
    instance: Instance,
    kind: K,
    dto: Dto<K>,
  ): Promise<SendResultDto> {
    return { success: true, wamid: await this.sender.send(instance, kind, dto) };
  }

  @SendRoute('text')
  text(
    @SendBody('text') dto: Dto<'text'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'text', dto);
  }

  @SendRoute('image')
  image(
    @SendBody('image') dto: Dto<'image'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'image', dto);
  }

  @SendRoute('document')
  document(
    @SendBody('document') dto: Dto<'document'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'document', dto);
  }

  @SendRoute('audio')
  audio(
    @SendBody('audio') dto: Dto<'audio'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'audio', dto);
  }

  @SendRoute('video')
  video(
    @SendBody('video') dto: Dto<'video'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'video', dto);
  }

  @SendRoute('sticker')
  sticker(
    @SendBody('sticker') dto: Dto<'sticker'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'sticker', dto);
  }

  @SendRoute('location')
  location(
    @SendBody('location') dto: Dto<'location'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'location', dto);
  }

  @SendRoute('contacts')
  contacts(
    @SendBody('contacts') dto: Dto<'contacts'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'contacts', dto);
  }

  @SendRoute('reaction')
  reaction(
    @SendBody('reaction') dto: Dto<'reaction'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'reaction', dto);
  }

  @SendRoute('template')
  template(
    @SendBody('template') dto: Dto<'template'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'template', dto);
  }

  @SendRoute('interactive')
  interactive(
    @SendBody('interactive') dto: Dto<'interactive'>,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.send(instance, 'interactive', dto);
  }
}
