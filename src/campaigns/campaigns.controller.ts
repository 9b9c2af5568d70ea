import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeyAuth, InboxAuth } from '../auth/auth.decorators.js';
import { ClientInstance } from '../auth/client-context.js';
import { ApiErrors, invalidRequest } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { discardRest, REFUSED_BODY_DISCARD_BYTES } from '../common/refused-body.js';
import type { RouteLimits } from '../common/route-limits.js';
import type { Instance } from '../instances/instance.types.js';
import { CAMPAIGN_ACTIONS, type CampaignAction } from './campaign.types.js';
import { CampaignsService } from './campaigns.service.js';
import {
  CAMPAIGN_BODY_LIMIT_BYTES,
  CampaignDto,
  CampaignPageDto,
  CreateCampaignDto,
  CsvCampaignDto,
  ListCampaignsQueryDto,
  MAX_CSV_BYTES,
  ListRecipientsQueryDto,
  RecipientPageDto,
} from './dto/campaign.dto.js';

const CAMPAIGN_ID = { name: 'id', format: 'uuid', description: 'The campaign' };
const NOT_FOUND = new AppException(
  'campaign_not_found',
  'No campaign 3f0c9a8e-4b7d-4c1e-9a55-0d2b6f1e7c42 on this instance',
);
const CONFLICT = new AppException(
  'campaign_state_conflict',
  'Campaign 3f0c9a8e-4b7d-4c1e-9a55-0d2b6f1e7c42 is completed: it cannot pause (only from scheduled, running)',
  [{ state: 'completed' }],
);

/** What creating a campaign answers about its template. */
const TEMPLATE_REFUSALS = [
  {
    error: new AppException(
      'template_not_found',
      'Template autumn_sale is not in the catalogue: a campaign sends only templates the catalogue knows (POST /templates/sync reads it)',
      [{ name: 'autumn_sale', language: 'pt_BR', languages: [] }],
    ),
    summary: 'a template the catalogue lacks',
  },
  {
    error: new AppException(
      'template_not_approved',
      'Template autumn_sale (pt_BR) is paused, not approved: it cannot be sent',
      [{ status: 'PAUSED', reason: null }],
    ),
    summary: 'the template is paused, disabled, pending or rejected',
  },
];

const ACTION_SUMMARIES: Record<CampaignAction, string> = {
  start: 'Starts a draft (scheduled while its start_at is ahead)',
  pause: 'Pauses a scheduled or running campaign; what is being sent finishes',
  resume:
    "Resumes a paused campaign (one it paused itself too: the template's category as it is now is confirmed)",
  cancel: 'Cancels a campaign that has not ended: nothing more is sent',
};

@ApiTags('campaigns')
@ApiKeyAuth()
@Controller('campaigns')
export class CampaignsController {
  constructor(private readonly campaigns: CampaignsService) {}

  @InboxAuth()
  @Post()
  @RouteConfig({ bodyLimit: CAMPAIGN_BODY_LIMIT_BYTES } satisfies RouteLimits)
  @ApiOperation({
    operationId: 'createCampaign',
    summary: 'A template sent to a list of recipients, paced by the workers',
    description:
      "An approved template of the catalogue, and each recipient's parameters checked against " +
      'its variables (400 naming the recipient); duplicates and invalid numbers are counted and ' +
      'left out. A draft until started (`start: true` starts it at once).',
  })
  @ApiCreatedResponse({ type: CampaignDto })
  @ApiErrors(
    invalidRequest(
      CreateCampaignDto,
      { name: 'Sale', template_name: 'autumn_sale', recipients: [] },
      'no recipients',
    ),
    ...TEMPLATE_REFUSALS,
  )
  create(
    @Body() body: CreateCampaignDto,
    @ClientInstance() instance: Instance,
  ): Promise<CampaignDto> {
    return this.campaigns.create(instance, body);
  }

  @InboxAuth()
  @Post('upload')
  @ApiOperation({
    operationId: 'uploadCampaign',
    summary: 'A campaign whose recipients are the rows of a CSV (up to 1,000,000)',
    description:
      'multipart/form-data: `campaign`, the JSON of POST /campaigns without `recipients` and with ' +
      '`columns` (the header names of the number, or user id, column and of each parameter), ' +
      'then `file`, a CSV with a header row (comma, semicolon or tab; UTF-8). Read as it ' +
      'arrives, in one transaction: a row whose parameters do not fit the template refuses the ' +
      'whole file (400 naming its line); duplicates and invalid numbers are counted and left out.',
  })
  @ApiQuery({
    name: 'instance_id',
    required: false,
    schema: { type: 'string', format: 'uuid' },
    description: 'The instance, unless the key is bound to one',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['campaign', 'file'],
      properties: {
        campaign: {
          allOf: [{ $ref: getSchemaPath(CsvCampaignDto) }],
          description: 'JSON: POST /campaigns without `recipients`, with `columns`',
        },
        file: {
          type: 'string',
          format: 'binary',
          description: `At most ${MAX_CSV_BYTES / 1024 / 1024} MB`,
        },
      },
    },
  })
  @ApiExtraModels(CsvCampaignDto)
  @ApiCreatedResponse({ type: CampaignDto })
  @ApiErrors(
    {
      error: AppException.validation([
        {
          field: 'campaign.columns.parameters.1',
          message: 'names first_name, which is not a column of the file (its header: phone, name)',
        },
      ]),
      summary: 'a mapped column the file lacks',
    },
    {
      error: new AppException('payload_too_large', 'A CSV lists at most 1,000,000 recipients'),
      summary: 'too many rows',
    },
    {
      error: new AppException(
        'unsupported_media_type',
        'Send multipart/form-data with the fields campaign (JSON) and then file (CSV)',
      ),
      summary: 'not a form',
    },
    ...TEMPLATE_REFUSALS,
  )
  async upload(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<CampaignDto> {
    try {
      return await this.campaigns.upload(instance, request);
    } catch (error) {
      // A file refused halfway is still arriving: read it to its end (up to a
      // bound) so its sender reads the answer instead of a broken connection.
      if (!(await discardRest(request.raw, REFUSED_BODY_DISCARD_BYTES))) {
        void reply.header('connection', 'close');
      }
      throw error;
    }
  }

  @InboxAuth()
  @Get()
  @ApiOperation({ operationId: 'listCampaigns', summary: "The instance's campaigns, newest first" })
  @ApiOkResponse({ type: CampaignPageDto })
  @ApiErrors(invalidRequest(ListCampaignsQueryDto, { limit: '500' }, 'limit over 100'))
  list(
    @Query() query: ListCampaignsQueryDto,
    @ClientInstance() instance: Instance,
  ): Promise<CampaignPageDto> {
    return this.campaigns.list(instance, query);
  }

  @InboxAuth()
  @Get(':id')
  @ApiOperation({
    operationId: 'getCampaign',
    summary: 'A campaign and its progress',
    description:
      'queued + sending + sent + failed + skipped = recipients; of the sent, how many the ' +
      'platform delivered and the customer read, and how many wrote back; failures by code, ' +
      'skips by reason.',
  })
  @ApiParam(CAMPAIGN_ID)
  @ApiOkResponse({ type: CampaignDto })
  @ApiErrors(NOT_FOUND)
  get(
    @Param('id') id: string,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<CampaignDto> {
    return this.campaigns.get(instance, id);
  }

  @InboxAuth()
  @Get(':id/recipients')
  @ApiOperation({
    operationId: 'listCampaignRecipients',
    summary: "A campaign's recipients in list order, with each one's state",
  })
  @ApiParam(CAMPAIGN_ID)
  @ApiOkResponse({ type: RecipientPageDto })
  @ApiErrors(
    NOT_FOUND,
    invalidRequest(ListRecipientsQueryDto, { state: 'lost' }, 'an unknown state'),
  )
  recipients(
    @Param('id') id: string,
    @Query() query: ListRecipientsQueryDto,
    @ClientInstance() instance: Instance,
  ): Promise<RecipientPageDto> {
    return this.campaigns.recipients(instance, id, query);
  }

  @InboxAuth()
  @Post(':id/:action')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'actOnCampaign',
    summary: 'start, pause, resume or cancel',
    description: Object.entries(ACTION_SUMMARIES)
      .map(([action, summary]) => `\`${action}\`: ${summary}.`)
      .join(' '),
  })
  @ApiParam(CAMPAIGN_ID)
  @ApiParam({ name: 'action', enum: Object.keys(CAMPAIGN_ACTIONS) })
  @ApiOkResponse({ type: CampaignDto })
  @ApiErrors(NOT_FOUND, CONFLICT)
  act(
    @Param('id') id: string,
    @Param('action') action: string,
    @Body() _body: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<CampaignDto> {
    if (!Object.hasOwn(CAMPAIGN_ACTIONS, action)) {
      throw new AppException(
        'not_found',
        `No campaign action ${action}: start, pause, resume or cancel`,
      );
    }
    return this.campaigns.act(instance, id, action as CampaignAction);
  }
}
