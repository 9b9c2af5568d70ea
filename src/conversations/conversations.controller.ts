import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, InboxAuth } from '../auth/auth.decorators.js';
import { ClientInstance } from '../auth/client-context.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { CONTACT_KEY_PARAM, CONTACT_NOT_FOUND } from '../contacts/contact-docs.js';
import type { Instance } from '../instances/instance.types.js';
import { ConversationsService } from './conversations.service.js';
import { ConversationPageDto, ConversationQueryDto } from './dto/conversation.dto.js';

@ApiTags('contacts')
@ApiKeyAuth()
@Controller('contacts')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @InboxAuth()
  @Get(':key/messages')
  @ApiOperation({
    operationId: 'getConversation',
    summary: "A contact's conversation, both directions, in arrival order",
    description:
      "Arrival order is the order the agent gets a burst in: the second of the message's time " +
      "(the platform's timestamp; a send: when it was recorded), then when it reached the " +
      'service, so a message stored late (its delivery was slower) still sits where it arrived. ' +
      'Without a cursor: the latest `limit` messages; `before` (the `older` cursor, or any ' +
      "message's `position`) pages back, and those pages stay put as messages arrive. `after` " +
      '(the `newer` cursor) follows: it gives the messages stored since, each exactly once and ' +
      'none skipped, in the order they were stored, and its `newer` follows on. A message ' +
      'reaches followers once every transaction of the database that began writing before it ' +
      'has ended; place one stored late by its `position`. The first `after` page can repeat a ' +
      'message its page showed (keep messages by `wamid`). Inbound messages carry their content ' +
      'and the turn they went to; outbound ones their status, errors and who sent them (`api` or ' +
      '`agent`). A cursor of an earlier version (a number) is still taken.',
  })
  @ApiParam(CONTACT_KEY_PARAM)
  @ApiOkResponse({ type: ConversationPageDto })
  @ApiErrors(
    invalidRequest(ConversationQueryDto, { before: 'x' }, 'before is not a cursor of this service'),
    CONTACT_NOT_FOUND,
  )
  conversation(
    @Param('key') key: string,
    @Query() query: ConversationQueryDto,
    @ClientInstance() instance: Instance,
  ): Promise<ConversationPageDto> {
    return this.conversations.conversation(instance, key, query);
  }
}
