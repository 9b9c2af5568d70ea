import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../auth/auth.decorators.js';
import { ApiErrors } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { PLATFORM_ID_PATTERN } from '../common/platform-id.js';
import { InstancesService } from '../instances/instances.service.js';
import { PLATFORM_UNAVAILABLE } from '../platform/platform-error-examples.js';
import { sendMediaFile } from './media-file.js';
import { MediaLinks, type MediaLinkRefusal } from './media-links.js';

const REFUSALS: Record<MediaLinkRefusal, string> = {
  invalid: 'The link is not valid',
  expired: 'The link has expired',
  used: 'The link was used already: each downloads once',
};

@ApiTags('media')
@Public()
@Controller('media-links')
export class MediaLinksController {
  constructor(
    private readonly links: MediaLinks,
    private readonly instances: InstancesService,
  ) {}

  @Get(':token')
  @ApiOperation({
    operationId: 'downloadMediaLink',
    summary: "Download a media file through a signed link from the agent's payload",
    description:
      'No API key: the link itself is the permission. It names one media file of one ' +
      'instance, expires after AGENT_MEDIA_URL_TTL_S and downloads once.',
  })
  @ApiParam({ name: 'token', description: "The link's signed token" })
  @ApiOkResponse({
    description: 'The file, with its content type',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiErrors(
    { error: new AppException('media_link_refused', REFUSALS.expired), summary: 'expired' },
    PLATFORM_UNAVAILABLE,
  )
  async download(
    @Param('token') token: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const link = this.links.verify(token);
    if (typeof link === 'string') throw new AppException('media_link_refused', REFUSALS[link]);
    if (!PLATFORM_ID_PATTERN.test(link.mediaId)) {
      throw new AppException('media_link_refused', REFUSALS.invalid);
    }
    const instance = await this.instances.findById(link.instanceId);
    if (!instance?.is_active) throw new AppException('media_link_refused', REFUSALS.invalid);
    // A HEAD (a link checker) says the link is good without using it up.
    if (request.method === 'HEAD') {
      if (await this.links.used(token)) throw new AppException('media_link_refused', REFUSALS.used);
      await reply.status(200).send();
      return;
    }
    if (!(await this.links.use(token, link))) {
      throw new AppException('media_link_refused', REFUSALS.used);
    }
    // A download that fails before a byte is sent leaves the link to be tried again.
    const file = await this.instances
      .session(instance)
      .downloadMedia(link.mediaId)
      .catch(async (error: unknown) => {
        await this.links.release(token).catch(() => undefined);
        throw error;
      });
    // Used once: no cache may keep it.
    void reply.header('cache-control', 'no-store');
    await sendMediaFile(reply, file, link.mediaId);
  }
}
