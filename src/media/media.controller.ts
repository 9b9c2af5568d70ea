import { Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiProduces,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientInstance } from '../auth/client-context.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { PLATFORM_ID_PATTERN } from '../common/platform-id.js';
import { ApiKeyAuth, InstanceFromForm } from '../auth/auth.decorators.js';
import type { Instance } from '../instances/instance.types.js';
import { MediaService } from './media.service.js';

/**
 * How much of a refused upload is read and thrown away before answering:
 * more than any type's limit but a document's, plus the form around it.
 */
const DISCARD_LIMIT_BYTES = 20 * 1024 * 1024;

export class MediaIdDto {
  @ApiProperty({ example: '1013859600285441', description: 'Use as media.id in /send/*' })
  id: string;
}

@ApiTags('media')
@ApiKeyAuth()
@Controller('media')
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Post('upload')
  @InstanceFromForm()
  @HttpCode(200)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    description:
      'instance_id (before the file; optional with a bound key) and file. Limits: image (jpeg, png) 5 MB; video (mp4, 3gpp) 16 MB; audio (aac, amr, mpeg, mp4, ogg) 16 MB; sticker (webp) 500 KB; document 100 MB',
    schema: {
      type: 'object',
      required: ['file'],
      properties: {
        instance_id: { type: 'string', format: 'uuid' },
        file: { type: 'string', format: 'binary' },
      },
    },
  })
  @ApiOkResponse({ type: MediaIdDto })
  async upload(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MediaIdDto> {
    try {
      return { id: await this.media.upload(request) };
    } catch (error) {
      // The client may still be sending the body: read it to its end (up to a
      // bound), so it reads the answer instead of a broken connection.
      if (!(await this.media.discardRest(request, DISCARD_LIMIT_BYTES))) {
        void reply.header('connection', 'close');
      }
      throw error;
    }
  }

  /** Streams a file a user sent (its media id comes with the inbound message). */
  @Get(':mediaId')
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'The file, with its content type' })
  async download(
    @Param('mediaId') mediaId: string,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!PLATFORM_ID_PATTERN.test(mediaId)) {
      throw AppException.validation([{ field: 'media_id', message: 'is not a media id' }]);
    }
    const file = await this.media.download(instance, mediaId);
    // A download, never a page: a user's file must not run as HTML in a browser.
    void reply.header('content-type', file.contentType);
    void reply.header('content-disposition', `attachment; filename="${mediaId}"`);
    void reply.header('x-content-type-options', 'nosniff');
    if (file.contentLength !== undefined) void reply.header('content-length', file.contentLength);
    await reply.send(file.stream);
  }
}
