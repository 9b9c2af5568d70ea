import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ClientInstance } from '../auth/client-context.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { ApiKeyAuth, InboxAuth } from '../auth/auth.decorators.js';
import type { Instance } from '../instances/instance.types.js';
import { MessageDto } from './dto/message.dto.js';
import { MessagesService } from './messages.service.js';

@ApiTags('messages')
@ApiKeyAuth()
@Controller('messages')
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  @InboxAuth()
  @Get(':wamid')
  @ApiOperation({
    operationId: 'getMessage',
    summary: 'Read a message sent or received, with its delivery status',
  })
  @ApiParam({ name: 'wamid', example: 'wamid.HBgLNTUxMTk5OTk5MDAwMBUCABEYEjA5QjY3' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors(
    invalidRequest(InstanceScopedDto, { instance_id: '42' }, 'instance_id is not a UUID'),
    new AppException(
      'message_not_found',
      'Message wamid.HBgLNTUxMTk5OTk5MDAwMBUCABEYEjA5QjY3 not found',
    ),
  )
  async get(
    @Param('wamid') wamid: string,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<MessageDto> {
    return MessageDto.from(await this.messages.findForInstance(instance.id, wamid));
  }
}
