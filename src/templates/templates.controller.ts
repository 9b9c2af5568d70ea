import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, InboxAuth } from '../auth/auth.decorators.js';
import { ClientInstance } from '../auth/client-context.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import type { Instance } from '../instances/instance.types.js';
import {
  CreateTemplateDto,
  DeleteTemplateQueryDto,
  DeletedTemplatesDto,
  ListTemplatesQueryDto,
  PreviewTemplateDto,
  TemplateDto,
  TemplatePageDto,
  TemplatePreviewDto,
  TemplateSyncDto,
} from './dto/template.dto.js';
import { TemplatesService } from './templates.service.js';

const TEMPLATE_ID_PARAM = {
  name: 'id',
  description: "The platform's template id (GET /templates lists them)",
  example: '1234567890',
};

const NOT_IN_CATALOGUE = new AppException(
  'template_id_not_found',
  'No template 1234567890 in the catalogue of this business account (POST /templates/sync reads it again)',
);

@ApiTags('templates')
@ApiKeyAuth()
@Controller('templates')
export class TemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  @InboxAuth()
  @Get()
  @ApiOperation({
    operationId: 'listTemplates',
    summary: "The templates of the instance's business account, by name",
    description:
      'The catalogue as last synced from the platform and moved by its webhooks (status, ' +
      'quality, category). `name` is a prefix.',
  })
  @ApiOkResponse({ type: TemplatePageDto })
  @ApiErrors(invalidRequest(ListTemplatesQueryDto, { status: 'LIVE' }, 'an unknown status'))
  list(
    @Query() query: ListTemplatesQueryDto,
    @ClientInstance() instance: Instance,
  ): Promise<TemplatePageDto> {
    return this.templates.list(instance, query);
  }

  @InboxAuth()
  @Post('sync')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'syncTemplates',
    summary: "Reads the account's whole catalogue from the platform now",
    description:
      "Every page of the platform's list; templates it no longer lists are removed. The " +
      'workers also sync when an instance is created or its token changes, and every ' +
      'TEMPLATE_SYNC_INTERVAL_S.',
  })
  @ApiOkResponse({ type: TemplateSyncDto })
  @ApiErrors(invalidRequest(InstanceScopedDto, { instance_id: 'x' }, 'instance_id is not a UUID'))
  sync(
    @Body() _body: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<TemplateSyncDto> {
    return this.templates.sync(instance);
  }

  @InboxAuth()
  // `{template}`, as DELETE's: one path may not take two parameter names.
  @Get(':template')
  @ApiOperation({
    operationId: 'getTemplate',
    summary: 'One template: components, variables with their examples, quality',
  })
  @ApiParam({ ...TEMPLATE_ID_PARAM, name: 'template' })
  @ApiOkResponse({ type: TemplateDto })
  @ApiErrors(NOT_IN_CATALOGUE)
  async get(
    @Param('template') id: string,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<TemplateDto> {
    return TemplateDto.from(await this.templates.get(instance, id));
  }

  @InboxAuth()
  @Post()
  @ApiOperation({
    operationId: 'createTemplate',
    summary: "Submits a new template for the platform's review",
    description:
      'Checked before the call (each error names its field): one BODY, variables numbered ' +
      'from {{1}} (or named, with `parameter_format: named`), an example for every variable, ' +
      "the platform's length limits. It joins the catalogue as the platform answers (PENDING, " +
      'usually); a `template.status` event follows its review.',
  })
  @ApiOkResponse({ type: TemplateDto })
  @ApiErrors(
    invalidRequest(
      CreateTemplateDto,
      { name: 'Order Shipped', language: 'pt_BR', category: 'UTILITY', components: [] },
      'a name with capitals and spaces',
    ),
  )
  async create(
    @Body() body: CreateTemplateDto,
    @ClientInstance() instance: Instance,
  ): Promise<TemplateDto> {
    return TemplateDto.from(await this.templates.create(instance, body));
  }

  @InboxAuth()
  @Post(':id/preview')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'previewTemplate',
    summary: 'The text a customer would see for these parameters',
    description:
      '`components` as /send/template takes them; a missing or extra parameter is refused as the send would be.',
  })
  @ApiParam(TEMPLATE_ID_PARAM)
  @ApiOkResponse({ type: TemplatePreviewDto })
  @ApiErrors(NOT_IN_CATALOGUE)
  preview(
    @Param('id') id: string,
    @Body() body: PreviewTemplateDto,
    @ClientInstance() instance: Instance,
  ): Promise<TemplatePreviewDto> {
    return this.templates.preview(instance, id, body.components ?? []);
  }

  @InboxAuth()
  @Delete(':template')
  @ApiOperation({
    operationId: 'deleteTemplate',
    summary: 'Deletes a template on the platform: every language, or one',
  })
  @ApiParam({ name: 'template', description: "The template's name", example: 'order_update' })
  @ApiOkResponse({ type: DeletedTemplatesDto })
  @ApiErrors(
    invalidRequest(DeleteTemplateQueryDto, { language: 'portuguese' }, 'language is not a locale'),
    new AppException(
      'template_not_found',
      'Template order_update has no es_ES version (it has pt_BR)',
      [{ name: 'order_update', language: 'es_ES', languages: ['pt_BR'] }],
    ),
  )
  async remove(
    @Param('template') name: string,
    @Query() query: DeleteTemplateQueryDto,
    @ClientInstance() instance: Instance,
  ): Promise<DeletedTemplatesDto> {
    return { deleted: await this.templates.remove(instance, name, query.language) };
  }
}
