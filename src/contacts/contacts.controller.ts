import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, InboxAuth } from '../auth/auth.decorators.js';
import type { PersonRef } from '../accounts/account.types.js';
import { CallingPerson, ClientInstance } from '../auth/client-context.js';
import { BAD_CURSOR } from '../common/time-id-cursor.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { CONTACT_KEY_PARAM, CONTACT_NOT_FOUND } from './contact-docs.js';
import type { Instance } from '../instances/instance.types.js';
import { ContactsService } from './contacts.service.js';
import { AppException } from '../common/app.exception.js';
import {
  ContactDto,
  ContactListItemDto,
  ContactPageDto,
  EndHandoffDto,
  ListContactsQueryDto,
  MarkReadDto,
  StartHandoffDto,
} from './dto/contact.dto.js';

@ApiTags('contacts')
@ApiKeyAuth()
@Controller('contacts')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @InboxAuth()
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

  @InboxAuth()
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
    @CallingPerson() person: PersonRef | null,
  ): Promise<ContactDto> {
    return this.contacts.startHandoff(instance, key, dto, person ? 'person' : 'api', person);
  }

  @InboxAuth()
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
    @CallingPerson() person: PersonRef | null,
  ): Promise<ContactDto> {
    return this.contacts.endHandoff(instance, key, dto ?? {}, person ? 'person' : 'api', person);
  }

  @InboxAuth()
  @Post(':key/read')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'markContactRead',
    summary: 'A person read the conversation: its messages so far are no longer unread',
    description:
      'Up to `wamid`, the newest message the person saw (the mark never moves back). The mark ' +
      'is the contact’s, shared by the people who answer the number (as the ' +
      'platform’s business app keeps one per chat); every open live stream is told. It sends ' +
      'the customer no read receipt.',
  })
  @ApiParam(CONTACT_KEY_PARAM)
  @ApiOkResponse({ type: ContactListItemDto })
  @ApiErrors(
    invalidRequest(MarkReadDto, {}, 'wamid missing'),
    CONTACT_NOT_FOUND,
    new AppException('message_not_found', 'Message wamid.X is not in this conversation'),
  )
  read(
    @Param('key') key: string,
    @Body() dto: MarkReadDto,
    @ClientInstance() instance: Instance,
  ): Promise<ContactListItemDto> {
    return this.contacts.markRead(instance, key, dto.wamid);
  }
}
