import { Injectable } from '@nestjs/common';
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ClientInstanceResolver } from '../auth/client-instance.resolver.js';
import { AppException } from '../common/app.exception.js';
import { malformedForm } from '../common/malformed-form.js';
import type { Instance } from '../instances/instance.types.js';
import { InstancesService } from '../instances/instances.service.js';
import type { MediaDownload, MediaInfo } from '../platform/platform-client.js';
import {
  MAX_UPLOAD_BYTES,
  MEDIA_MAX_BYTES,
  SUPPORTED_MEDIA_TYPES,
  describeLimit,
  mediaCategory,
} from './media-limits.js';

/** Room for the form's other fields and part headers around the file. */
const MULTIPART_OVERHEAD_BYTES = 16 * 1024;

/**
 * Passes the file on chunk by chunk, stopping with 413 once it is over its
 * limit. The 413 is also kept in `over`: stopping the stream fails the
 * upstream upload too, and whichever error surfaces first, the answer is the 413.
 */
async function* limited(
  file: AsyncIterable<Buffer> & { truncated?: boolean },
  maxBytes: number,
  category: string,
  over: { error?: AppException },
): AsyncGenerator<Buffer> {
  let total = 0;
  try {
    for await (const chunk of file) {
      total += chunk.length;
      if (total > maxBytes) throw (over.error = tooLarge(category, maxBytes));
      yield chunk;
    }
  } catch (error) {
    throw malformedForm(error);
  }
  if (file.truncated) throw (over.error = tooLarge(category, maxBytes));
}

function tooLarge(category: string, maxBytes: number): AppException {
  return new AppException(
    'payload_too_large',
    `${category} files are limited to ${describeLimit(maxBytes)}`,
  );
}

@Injectable()
export class MediaService {
  constructor(
    private readonly resolver: ClientInstanceResolver,
    private readonly instances: InstancesService,
  ) {}

  /**
   * Streams a multipart upload (`instance_id` field, then `file`) to the
   * platform. Type (415) and size (413) are checked before anything goes
   * upstream whenever the request says its length; a body that does not is
   * counted as it flows and cut off at the limit.
   */
  async upload(request: FastifyRequest): Promise<string> {
    if (!request.isMultipart()) {
      throw new AppException(
        'unsupported_media_type',
        'Send multipart/form-data with the fields instance_id and file',
      );
    }
    const declared = Number(request.headers['content-length']);
    if (declared > MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES) {
      throw tooLarge('document', MAX_UPLOAD_BYTES);
    }
    const part = await request.file().catch((error: unknown) => {
      throw malformedForm(error);
    });
    if (!part) throw AppException.validation([{ field: 'file', message: 'is required' }]);
    try {
      const field = part.fields.instance_id;
      const requested =
        field && !Array.isArray(field) && field.type === 'field' ? field.value : undefined;
      const instance = await this.instanceOf(request, requested);
      const category = mediaCategory(part.mimetype);
      if (!category) {
        throw new AppException(
          'unsupported_media_type',
          `${part.mimetype} is not a type the platform takes (${SUPPORTED_MEDIA_TYPES.join(', ')})`,
        );
      }
      const maxBytes = MEDIA_MAX_BYTES[category];
      if (declared > maxBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge(category, maxBytes);
      const over: { error?: AppException } = {};
      try {
        return await this.instances.session(instance).uploadMedia({
          file: limited(part.file, maxBytes, category, over),
          filename: part.filename || 'upload',
          contentType: part.mimetype,
        });
      } catch (error) {
        throw over.error ?? error;
      }
    } finally {
      // Whatever happened, let the rest of the file flow past the parser.
      part.file.resume();
    }
  }

  /**
   * The instance an upload is for. A person's was chosen by the guard (from
   * the query, or their only instance): a form naming another is refused. An
   * API key's comes from the form, else the query, else the key's binding.
   */
  private async instanceOf(request: FastifyRequest, fromForm: unknown): Promise<Instance> {
    const chosen = request.client?.instance;
    if (chosen) {
      if (
        fromForm !== undefined &&
        (typeof fromForm !== 'string' || fromForm.toLowerCase() !== chosen.id)
      ) {
        throw new AppException(
          'instance_forbidden',
          'The form names another instance than the request (pass instance_id in the query)',
        );
      }
      return chosen;
    }
    return this.resolver.resolve(
      request.apiKeyPrincipal!,
      fromForm ?? (request.query as { instance_id?: unknown }).instance_id,
    );
  }

  download(instance: Instance, mediaId: string): Promise<MediaDownload> {
    return this.instances.session(instance).downloadMedia(mediaId);
  }

  info(instance: Instance, mediaId: string): Promise<MediaInfo> {
    return this.instances.session(instance).mediaInfo(mediaId);
  }
}
