import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';
import { AdminAuth } from '../auth/auth.decorators.js';
import { ApiErrors, EXAMPLE_ID, invalidRequest, thrownBy } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { AppConfig } from '../config/app-config.js';
import { CreateInstanceDto } from '../instances/dto/create-instance.dto.js';
import {
  CreatedInstanceDto,
  InstanceDetailDto,
  InstanceListItemDto,
  InstanceStateDto,
  InstancesStatusDto,
  SuccessMessageDto,
  UpdatedInstanceDto,
} from '../instances/dto/instance-responses.dto.js';
import { UpdateInstanceDto } from '../instances/dto/update-instance.dto.js';
import { InstancesService } from '../instances/instances.service.js';
import { HistoryStore } from '../history/history.store.js';
import { TemplatesService } from '../templates/templates.service.js';
import {
  PLATFORM_INVALID_TOKEN,
  PLATFORM_UNAVAILABLE,
} from '../platform/platform-error-examples.js';

/** The answer to an {id} that is not a UUID, as the pipe gives it. */
const BAD_ID = thrownBy(
  () => new ParseUuidPipe().transform('42', { type: 'param', data: 'id' }),
  'id is not a UUID',
);
const NOT_FOUND = new AppException('instance_not_found', `Instance ${EXAMPLE_ID} not found`);

@ApiTags('admin: instances')
@AdminAuth()
@Controller('admin/instances')
export class InstancesController {
  constructor(
    private readonly instances: InstancesService,
    private readonly templates: TemplatesService,
    private readonly history: HistoryStore,
    private readonly config: AppConfig,
  ) {}

  @Post()
  @ApiOperation({
    operationId: 'createInstance',
    summary: 'Connect a phone number',
    description:
      'The access token is checked with the platform (by reading the number) before the ' +
      'instance is stored with the token encrypted.',
  })
  @ApiCreatedResponse({ type: CreatedInstanceDto })
  @ApiErrors(
    invalidRequest(
      CreateInstanceDto,
      {
        name: 'Store front',
        phone_number_id: '106540352242922',
        channel_account_id: '102290129340398',
        access_token: 'EAAG…',
        token_type: 'user',
      },
      'an unknown token_type',
    ),
    new AppException(
      'instance_exists',
      'An instance for phone_number_id 106540352242922 already exists',
    ),
    PLATFORM_INVALID_TOKEN,
    PLATFORM_UNAVAILABLE,
  )
  async create(@Body() dto: CreateInstanceDto): Promise<CreatedInstanceDto> {
    const instance = await this.instances.create(dto);
    // The new number's account catalogue, read by the workers.
    await this.templates.requestSync(instance);
    return CreatedInstanceDto.from(instance);
  }

  @Get()
  @ApiOperation({ operationId: 'listInstances', summary: 'List the instances' })
  @ApiOkResponse({ type: [InstanceListItemDto] })
  async list(): Promise<InstanceListItemDto[]> {
    return (await this.instances.list()).map((instance) => InstanceListItemDto.from(instance));
  }

  @Get('status/all')
  @ApiOperation({
    operationId: 'getInstancesStatus',
    summary: 'Count the instances, active and inactive',
  })
  @ApiOkResponse({ type: InstancesStatusDto })
  async statusAll(): Promise<InstancesStatusDto> {
    const all = await this.instances.list();
    const active = all.filter((instance) => instance.is_active).length;
    return {
      total: all.length,
      active,
      inactive: all.length - active,
      instances: all.map(({ id, name, is_active, status, quality_rating }) => ({
        id,
        name,
        is_active,
        status,
        quality_rating,
      })),
    };
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getInstance',
    summary: 'Read an instance',
    description: 'With its webhook_verify_token, to give the platform as the verify token.',
  })
  @ApiOkResponse({ type: InstanceDetailDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  async detail(@Param('id', ParseUuidPipe) id: string): Promise<InstanceDetailDto> {
    return InstanceDetailDto.from(
      await this.instances.get(id),
      this.config.PLATFORM_SEND_RATE,
      await this.history.summary(id),
    );
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateInstance',
    summary: 'Change an instance',
    description:
      'Only the fields given change; null clears business_id and platform_app_id. A new ' +
      'access_token is checked with the platform first. phone_number_id cannot change. ' +
      "agent.url is checked like an event subscription's URL: https to a public address " +
      '(or one EVENT_TARGET_ALLOWLIST names), without user:password@.',
  })
  @ApiOkResponse({ type: UpdatedInstanceDto })
  @ApiErrors(
    BAD_ID,
    invalidRequest(
      UpdateInstanceDto,
      { phone_number_id: '106540352242923' },
      'phone_number_id cannot change',
    ),
    {
      error: AppException.validation([
        {
          field: 'agent.url',
          message: 'is refused: 169.254.169.254 resolves to a linkLocal address 169.254.169.254',
        },
      ]),
      summary: 'an agent URL the outbound target guard refuses (see EVENT_TARGET_ALLOWLIST)',
    },
    NOT_FOUND,
    PLATFORM_INVALID_TOKEN,
    PLATFORM_UNAVAILABLE,
  )
  async update(
    @Param('id', ParseUuidPipe) id: string,
    @Body() dto: UpdateInstanceDto,
  ): Promise<UpdatedInstanceDto> {
    const instance = await this.instances.update(id, dto);
    // A new token may read a catalogue the old one could not.
    if (dto.access_token !== undefined) await this.templates.requestSync(instance);
    return { id: instance.id, name: instance.name, updated_at: instance.updated_at.toISOString() };
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteInstance',
    summary: 'Delete an instance',
    description: 'Its API keys are deleted with it.',
  })
  @ApiOkResponse({ type: SuccessMessageDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  async remove(@Param('id', ParseUuidPipe) id: string): Promise<SuccessMessageDto> {
    await this.instances.remove(id);
    return { success: true, message: `Instance ${id} deleted` };
  }

  @Post(':id/activate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'activateInstance',
    summary: 'Activate an instance',
    description: 'The access token is checked with the platform again.',
  })
  @ApiOkResponse({ type: InstanceStateDto })
  @ApiErrors(BAD_ID, NOT_FOUND, PLATFORM_INVALID_TOKEN, PLATFORM_UNAVAILABLE)
  async activate(@Param('id', ParseUuidPipe) id: string): Promise<InstanceStateDto> {
    const instance = await this.instances.activate(id);
    return { success: true, status: instance.status };
  }

  @Post(':id/deactivate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'deactivateInstance',
    summary: 'Deactivate an instance',
    description: 'Its sends are refused (409 instance_inactive) and its deliveries skipped.',
  })
  @ApiOkResponse({ type: InstanceStateDto })
  @ApiErrors(BAD_ID, NOT_FOUND)
  async deactivate(@Param('id', ParseUuidPipe) id: string): Promise<InstanceStateDto> {
    const instance = await this.instances.deactivate(id);
    return { success: true, status: instance.status };
  }
}
