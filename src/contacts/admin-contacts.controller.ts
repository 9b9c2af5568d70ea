import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { PersonRef } from '../accounts/account.types.js';
import { AdminAuth } from '../auth/auth.decorators.js';
import { CallingAdmin } from '../auth/client-context.js';
import { ApiErrors, EXAMPLE_ID, thrownBy } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';
import { InstancesService } from '../instances/instances.service.js';
import { CONTACT_KEY_PARAM, CONTACT_NOT_FOUND } from './contact-docs.js';
import { ContactsService } from './contacts.service.js';
import { ContactDto, EndHandoffDto, StartHandoffDto } from './dto/contact.dto.js';

const BAD_ID = thrownBy(
  () => new ParseUuidPipe().transform('42', { type: 'param', data: 'id' }),
  'id is not a UUID',
);
const NO_INSTANCE = new AppException('instance_not_found', `Instance ${EXAMPLE_ID} not found`);

@ApiTags('admin: instances')
@AdminAuth()
@Controller('admin/instances/:id/contacts')
export class AdminContactsController {
  constructor(
    private readonly contacts: ContactsService,
    private readonly instances: InstancesService,
  ) {}

  @Post(':key/handoff')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminStartHandoff', summary: 'Pause the agent for a contact' })
  @ApiParam(CONTACT_KEY_PARAM)
  @ApiOkResponse({ type: ContactDto })
  @ApiErrors(BAD_ID, NO_INSTANCE, CONTACT_NOT_FOUND)
  async start(
    @Param('id', ParseUuidPipe) id: string,
    @Param('key') key: string,
    @Body() dto: StartHandoffDto,
    @CallingAdmin() admin: PersonRef,
  ): Promise<ContactDto> {
    return this.contacts.startHandoff(await this.instances.get(id), key, dto, 'admin', admin);
  }

  @Delete(':key/handoff')
  @ApiOperation({ operationId: 'adminEndHandoff', summary: 'Hand a contact back to the agent' })
  @ApiParam(CONTACT_KEY_PARAM)
  @ApiOkResponse({ type: ContactDto })
  @ApiErrors(BAD_ID, NO_INSTANCE, CONTACT_NOT_FOUND)
  async end(
    @Param('id', ParseUuidPipe) id: string,
    @Param('key') key: string,
    @Body() dto: EndHandoffDto,
    @CallingAdmin() admin: PersonRef,
  ): Promise<ContactDto> {
    return this.contacts.endHandoff(await this.instances.get(id), key, dto ?? {}, 'admin', admin);
  }

  @Delete(':key/opt-out')
  @ApiOperation({
    operationId: 'liftOptOut',
    summary: "Lift a contact's opt-out (the contact asked for messages another way)",
  })
  @ApiParam(CONTACT_KEY_PARAM)
  @ApiOkResponse({ type: ContactDto })
  @ApiErrors(BAD_ID, NO_INSTANCE, CONTACT_NOT_FOUND)
  async optIn(
    @Param('id', ParseUuidPipe) id: string,
    @Param('key') key: string,
  ): Promise<ContactDto> {
    return this.contacts.optIn(await this.instances.get(id), key);
  }
}
