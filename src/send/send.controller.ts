import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ClientInstance } from '../auth/client-context.js';
import { ApiKeyAuth } from '../common/public.decorator.js';
import type { Instance } from '../instances/entities/instance.entity.js';
import { SendInteractiveDto } from './dto/send-interactive.dto.js';
import { SendResultDto } from './dto/send-result.dto.js';
import {
  SendAudioDto,
  SendContactsDto,
  SendDocumentDto,
  SendImageDto,
  SendLocationDto,
  SendReactionDto,
  SendStickerDto,
  SendTextDto,
  SendVideoDto,
} from './dto/send-simple.dto.js';
import { SendTemplateDto } from './dto/send-template.dto.js';
import { INTERACTIVE_EXAMPLES, SEND_EXAMPLES } from './send-examples.js';
import { SendService } from './send.service.js';

@ApiTags('send')
@ApiBearerAuth('api-key')
@ApiKeyAuth()
@Controller('send')
export class SendController {
  constructor(private readonly sender: SendService) {}

  private async result(wamid: Promise<string>): Promise<SendResultDto> {
    return { success: true, wamid: await wamid };
  }

  @Post('text')
  @HttpCode(200)
  @ApiBody({ type: SendTextDto, examples: { text: { value: SEND_EXAMPLES.text } } })
  @ApiOkResponse({ type: SendResultDto })
  text(@Body() dto: SendTextDto, @ClientInstance() instance: Instance): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'text', dto));
  }

  @Post('image')
  @HttpCode(200)
  @ApiBody({ type: SendImageDto, examples: { image: { value: SEND_EXAMPLES.image } } })
  @ApiOkResponse({ type: SendResultDto })
  image(@Body() dto: SendImageDto, @ClientInstance() instance: Instance): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'image', dto));
  }

  @Post('document')
  @HttpCode(200)
  @ApiBody({ type: SendDocumentDto, examples: { document: { value: SEND_EXAMPLES.document } } })
  @ApiOkResponse({ type: SendResultDto })
  document(
    @Body() dto: SendDocumentDto,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'document', dto));
  }

  @Post('audio')
  @HttpCode(200)
  @ApiBody({ type: SendAudioDto, examples: { audio: { value: SEND_EXAMPLES.audio } } })
  @ApiOkResponse({ type: SendResultDto })
  audio(@Body() dto: SendAudioDto, @ClientInstance() instance: Instance): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'audio', dto));
  }

  @Post('video')
  @HttpCode(200)
  @ApiBody({ type: SendVideoDto, examples: { video: { value: SEND_EXAMPLES.video } } })
  @ApiOkResponse({ type: SendResultDto })
  video(@Body() dto: SendVideoDto, @ClientInstance() instance: Instance): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'video', dto));
  }

  @Post('sticker')
  @HttpCode(200)
  @ApiBody({ type: SendStickerDto, examples: { sticker: { value: SEND_EXAMPLES.sticker } } })
  @ApiOkResponse({ type: SendResultDto })
  sticker(
    @Body() dto: SendStickerDto,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'sticker', dto));
  }

  @Post('location')
  @HttpCode(200)
  @ApiBody({ type: SendLocationDto, examples: { location: { value: SEND_EXAMPLES.location } } })
  @ApiOkResponse({ type: SendResultDto })
  location(
    @Body() dto: SendLocationDto,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'location', dto));
  }

  @Post('contacts')
  @HttpCode(200)
  @ApiBody({ type: SendContactsDto, examples: { contacts: { value: SEND_EXAMPLES.contacts } } })
  @ApiOkResponse({ type: SendResultDto })
  contacts(
    @Body() dto: SendContactsDto,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'contacts', dto));
  }

  @Post('reaction')
  @HttpCode(200)
  @ApiBody({ type: SendReactionDto, examples: { reaction: { value: SEND_EXAMPLES.reaction } } })
  @ApiOkResponse({ type: SendResultDto })
  reaction(
    @Body() dto: SendReactionDto,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'reaction', dto));
  }

  @Post('template')
  @HttpCode(200)
  @ApiBody({ type: SendTemplateDto, examples: { template: { value: SEND_EXAMPLES.template } } })
  @ApiOkResponse({ type: SendResultDto })
  template(
    @Body() dto: SendTemplateDto,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'template', dto));
  }

  @Post('interactive')
  @HttpCode(200)
  @ApiBody({
    type: SendInteractiveDto,
    examples: Object.fromEntries(
      Object.entries(INTERACTIVE_EXAMPLES).map(([name, value]) => [name, { value }]),
    ),
  })
  @ApiOkResponse({ type: SendResultDto })
  interactive(
    @Body() dto: SendInteractiveDto,
    @ClientInstance() instance: Instance,
  ): Promise<SendResultDto> {
    return this.result(this.sender.send(instance, 'interactive', dto));
  }
}
