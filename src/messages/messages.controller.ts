import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ClientInstance } from '../auth/client-context.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { ApiKeyAuth } from '../auth/auth.decorators.js';
import type { Instance } from '../instances/instance.types.js';
import { MessageDto } from './dto/message.dto.js';
import { MessagesService } from './messages.service.js';

@ApiTags('messages')
@ApiKeyAuth()
@Controller('messages')
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  @Get(':wamid')
  @ApiOkResponse({ type: MessageDto })
  async get(
    @Param('wamid') wamid: string,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<MessageDto> {
    return MessageDto.from(await this.messages.findForInstance(instance.id, wamid));
  }
}
