import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';
import { AdminAuth } from '../auth/auth.decorators.js';
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

@ApiTags('admin: instances')
@AdminAuth()
@Controller('admin/instances')
export class InstancesController {
  constructor(private readonly instances: InstancesService) {}

  @Post()
  @ApiCreatedResponse({ type: CreatedInstanceDto })
  async create(@Body() dto: CreateInstanceDto): Promise<CreatedInstanceDto> {
    return CreatedInstanceDto.from(await this.instances.create(dto));
  }

  @Get()
  @ApiOkResponse({ type: [InstanceListItemDto] })
  async list(): Promise<InstanceListItemDto[]> {
    return (await this.instances.list()).map((instance) => InstanceListItemDto.from(instance));
  }

  @Get('status/all')
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
  @ApiOkResponse({ type: InstanceDetailDto })
  async detail(@Param('id', ParseUuidPipe) id: string): Promise<InstanceDetailDto> {
    return InstanceDetailDto.from(await this.instances.get(id));
  }

  @Patch(':id')
  @ApiOkResponse({ type: UpdatedInstanceDto })
  async update(
    @Param('id', ParseUuidPipe) id: string,
    @Body() dto: UpdateInstanceDto,
  ): Promise<UpdatedInstanceDto> {
    const instance = await this.instances.update(id, dto);
    return { id: instance.id, name: instance.name, updated_at: instance.updated_at.toISOString() };
  }

  @Delete(':id')
  @ApiOkResponse({ type: SuccessMessageDto })
  async remove(@Param('id', ParseUuidPipe) id: string): Promise<SuccessMessageDto> {
    await this.instances.remove(id);
    return { success: true, message: `Instance ${id} deleted` };
  }

  @Post(':id/activate')
  @HttpCode(200)
  @ApiOkResponse({ type: InstanceStateDto })
  async activate(@Param('id', ParseUuidPipe) id: string): Promise<InstanceStateDto> {
    const instance = await this.instances.activate(id);
    return { success: true, status: instance.status };
  }

  @Post(':id/deactivate')
  @HttpCode(200)
  @ApiOkResponse({ type: InstanceStateDto })
  async deactivate(@Param('id', ParseUuidPipe) id: string): Promise<InstanceStateDto> {
    const instance = await this.instances.deactivate(id);
    return { success: true, status: instance.status };
  }
}
