import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth } from '../auth/auth.decorators.js';
import { ClientInstance } from '../auth/client-context.js';
import { BAD_CURSOR } from '../common/time-id-cursor.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { CONTACT_KEY_PARAM, CONTACT_NOT_FOUND } from './contact-docs.js';
import type { Instance } from '../instances/instance.types.js';
import { ContactsService } from './contacts.service.js';
import {
  ContactDto,
  ContactPageDto,
  ConversationPageDto,
  ConversationQueryDto,
  EndHandoffDto,
  ListContactsQueryDto,
  StartHandoffDto,
} from './dto/contact.dto.js';

@ApiTags('contacts')
@ApiKeyAuth()
@Controller('contacts')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listContacts',
    summary: "The instance's contacts, newest activity first",
    description:
      'Each with its last inbound and outbound times, its 24-hour window, its handoff and ' +
      'opt-out. `q` searches a number prefix (digits) or the start of a name.',
  })
  @ApiOkResponse({ type: ContactPageDto })
  @ApiErrors(invalidRequest(ListContactsQueryDto, { limit: '500' }, 'limit over 100'), BAD_CURSOR)
  list(
    @Query() query: ListContactsQueryDto,
    @ClientInstance() instance: Instance,
  ): Promise<ContactPageDto> {
    return this.contacts.list(instance, query);
  }

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
    return this.contacts.conversation(instance, key, query);
  }

  @Post(':key/handoff')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'startHandoff',
    summary: 'A person takes the contact over: the agent pauses for it',
    description:
      'Inbound messages are still stored and forwarded as events, but no turn runs, and a reply ' +
      'the agent has in flight is not sent. The pause ends at `until` (default: after ' +
      'HANDOFF_DEFAULT_S) or with DELETE.',
  })
  @ApiParam(CONTACT_KEY_PARAM)
  @ApiOkResponse({ type: ContactDto })
  @ApiErrors(
    invalidRequest(StartHandoffDto, { until: 'tomorrow' }, 'until is not a date-time'),
    CONTACT_NOT_FOUND,
  )
  start(
    @Param('key') key: string,
    @Body() dto: StartHandoffDto,
    @ClientInstance() instance: Instance,
  ): Promise<ContactDto> {
    return this.contacts.startHandoff(instance, key, dto, 'api');
  }

  @Delete(':key/handoff')
  @ApiOperation({
    operationId: 'endHandoff',
    summary: 'Hand the contact back to the agent',
    description:
      'Messages that came during the pause go to the agent only with `include_pending: true`.',
  })
  @ApiParam(CONTACT_KEY_PARAM)
  @ApiOkResponse({ type: ContactDto })
  @ApiErrors(
    invalidRequest(EndHandoffDto, { include_pending: 'yes' }, 'include_pending is not a boolean'),
    CONTACT_NOT_FOUND,
  )
  end(
    @Param('key') key: string,
    @Body() dto: EndHandoffDto,
    @ClientInstance() instance: Instance,
  ): Promise<ContactDto> {
    return this.contacts.endHandoff(instance, key, dto ?? {}, 'api');
  }
}
