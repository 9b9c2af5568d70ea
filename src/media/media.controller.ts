import { Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientInstance } from '../auth/client-context.js';
import { ApiErrors } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { InstanceScopedDto } from '../common/instance-scoped.dto.js';
import { PLATFORM_ID_PATTERN } from '../common/platform-id.js';
import { discardRest, REFUSED_BODY_DISCARD_BYTES } from '../common/refused-body.js';
import { InboxAuth, InstanceFromForm } from '../auth/auth.decorators.js';
import type { Instance } from '../instances/instance.types.js';
import {
  platformRejected,
  PLATFORM_INVALID_TOKEN,
  PLATFORM_UNAVAILABLE,
} from '../platform/platform-error-examples.js';
import { describeLimit, MEDIA_MAX_BYTES, SUPPORTED_MEDIA_TYPES } from './media-limits.js';
import { sendMediaFile } from './media-file.js';
import { MediaService } from './media.service.js';

/** The answer to a media id that cannot be one. */
function invalidMediaId(): AppException {
  return AppException.validation([{ field: 'media_id', message: 'is not a media id' }]);
}

export class MediaIdDto {
  @ApiProperty({ example: '1013859600285441', description: 'Use as media.id in /send/*' })
  id: string;
}

export class MediaInfoDto {
  @ApiProperty({ example: '1013859600285441' }) id: string;
  @ApiProperty({ type: String, nullable: true, example: 'application/pdf' })
  mime_type: string | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 303833,
    description: 'In bytes; null when the platform does not say',
  })
  file_size: number | null;
}

const MEDIA_ERRORS = [
  { error: invalidMediaId(), summary: 'not a media id' },
  platformRejected(
    100,
    "(#100) Unsupported get request. Object with ID '1013859600285441' does not exist",
    'the platform knows no such media for this number',
  ),
  PLATFORM_UNAVAILABLE,
] as const;

@ApiTags('media')
@InboxAuth()
@Controller('media')
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Post('upload')
  @InstanceFromForm()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'uploadMedia',
    summary: 'Upload media to use in a send',
    description:
      'Streamed to the platform as it arrives. Answers the media id to give as media.id in /send/*.',
  })
  @ApiQuery({
    name: 'instance_id',
    required: false,
    schema: { type: 'string', format: 'uuid' },
    description:
      "The instance, when the form does not name it; a person's token names it here (or, for " +
      'an operator of one instance, not at all)',
  })
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
  @ApiErrors(
    {
      error: AppException.validation([{ field: 'file', message: 'is required' }]),
      summary: 'no file in the form',
    },
    {
      error: new AppException(
        'payload_too_large',
        `image files are limited to ${describeLimit(MEDIA_MAX_BYTES.image)}`,
      ),
      summary: 'an image over its limit',
    },
    {
      error: new AppException(
        'unsupported_media_type',
        `application/zip is not a type the platform takes (${SUPPORTED_MEDIA_TYPES.join(', ')})`,
      ),
      summary: 'a type the platform does not take',
    },
    {
      error: new AppException('request_timeout', 'The upload stopped arriving for 10 s'),
      summary: 'the client stopped sending the file',
    },
    PLATFORM_INVALID_TOKEN,
    PLATFORM_UNAVAILABLE,
  )
  async upload(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MediaIdDto> {
    try {
      return { id: await this.media.upload(request) };
    } catch (error) {
      // The client may still be sending the body: read it to its end (up to a
      // bound), so it reads the answer instead of a broken connection.
      if (!(await discardRest(request.raw, REFUSED_BODY_DISCARD_BYTES))) {
        void reply.header('connection', 'close');
      }
      throw error;
    }
  }

  /** A file's type and size, without downloading it: what a document shows before a click. */
  @Get(':mediaId/info')
  @ApiOperation({
    operationId: 'getMediaInfo',
    summary: 'The type and size of a media file',
    description:
      'One call to the platform, no download: what a document shows before it is opened.',
  })
  @ApiParam({ name: 'mediaId', example: '1013859600285441', description: 'The media id' })
  @ApiOkResponse({ type: MediaInfoDto })
  @ApiErrors(...MEDIA_ERRORS)
  async info(
    @Param('mediaId') mediaId: string,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
  ): Promise<MediaInfoDto> {
    if (!PLATFORM_ID_PATTERN.test(mediaId)) throw invalidMediaId();
    const info = await this.media.info(instance, mediaId);
    return { id: mediaId, mime_type: info.mimeType, file_size: info.fileSize };
  }

  /** Streams a file a user sent (its media id comes with the inbound message). */
  @Get(':mediaId')
  @ApiOperation({
    operationId: 'downloadMedia',
    summary: 'Download media a user sent',
    description:
      'Streams the file as a download (Content-Disposition: attachment), with the content type ' +
      'the platform gives. The media id comes with the inbound message.',
  })
  @ApiParam({ name: 'mediaId', example: '1013859600285441', description: 'The media id' })
  @ApiOkResponse({
    description: 'The file, with its content type',
    content: {
      'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    },
  })
  @ApiErrors(...MEDIA_ERRORS)
  async download(
    @Param('mediaId') mediaId: string,
    @Query() _query: InstanceScopedDto,
    @ClientInstance() instance: Instance,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!PLATFORM_ID_PATTERN.test(mediaId)) {
      throw invalidMediaId();
    }
    await sendMediaFile(reply, await this.media.download(instance, mediaId), mediaId);
  }
}
