import { Body, Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeysService } from '../auth/api-keys.service.js';
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
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
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
  @ApiOkResponse({ type: [ApiKeyDto] })
  async list(): Promise<ApiKeyDto[]> {
    return (await this.apiKeys.list()).map((key) => ApiKeyDto.from(key));
  }

  @Delete(':id')
  @ApiOkResponse({ type: SuccessMessageDto })
  async remove(@Param('id', ParseUuidPipe) id: string): Promise<SuccessMessageDto> {
    await this.apiKeys.remove(id);
    return { success: true, message: `API key ${id} revoked` };
  }
}
