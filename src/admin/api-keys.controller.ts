import { Body, Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeysService } from '../auth/api-keys.service.js';
import { ApiErrors, EXAMPLE_ID, invalidRequest, thrownBy } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';
import { AdminAuth } from '../auth/auth.decorators.js';
import { SuccessMessageDto } from '../instances/dto/instance-responses.dto.js';
import { InstancesService } from '../instances/instances.service.js';
import { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto } from './dto/api-key.dto.js';

@ApiTags('admin: api keys')
@AdminAuth()
@Controller('admin/api-keys')
export class ApiKeysController {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly instances: InstancesService,
  ) {}

  @Post()
  @ApiOperation({
    operationId: 'createApiKey',
    summary: 'Issue an API key',
    description:
      'The key is in this answer only (it is stored as a hash). With instance_id it works ' +
      'for that instance only, and requests may leave instance_id out.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiErrors(
    invalidRequest(
      CreateApiKeyDto,
      { name: 'crm', instance_id: '42' },
      'instance_id is not a UUID',
    ),
    new AppException('instance_not_found', `Instance ${EXAMPLE_ID} not found`),
  )
  async create(@Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    if (dto.instance_id) await this.instances.get(dto.instance_id);
    const { record, key } = await this.apiKeys.create(dto.name, dto.instance_id ?? null);
    return {
      id: record.id,
      name: record.name,
      instance_id: record.instance_id,
      key,
      prefix: record.prefix,
      created_at: record.created_at.toISOString(),
    };
  }

  @Get()
  @ApiOperation({ operationId: 'listApiKeys', summary: 'List the API keys (never the keys)' })
  @ApiOkResponse({ type: [ApiKeyDto] })
  async list(): Promise<ApiKeyDto[]> {
    return (await this.apiKeys.list()).map((key) => ApiKeyDto.from(key));
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteApiKey',
    summary: 'Revoke an API key',
    description: 'It stops working at once, in every process.',
  })
  @ApiOkResponse({ type: SuccessMessageDto })
  @ApiErrors(
    thrownBy(
      () => new ParseUuidPipe().transform('42', { type: 'param', data: 'id' }),
      'id is not a UUID',
    ),
    new AppException('api_key_not_found', `API key ${EXAMPLE_ID} not found`),
  )
  async remove(@Param('id', ParseUuidPipe) id: string): Promise<SuccessMessageDto> {
    await this.apiKeys.remove(id);
    return { success: true, message: `API key ${id} revoked` };
  }
}
