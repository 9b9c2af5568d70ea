import type { FastifyReply } from 'fastify';
import type { MediaDownload } from '../platform/platform-client.js';

/** Streams a user's media file as a download, never a page: it must not run as HTML in a browser. */
export async function sendMediaFile(
  reply: FastifyReply,
  file: MediaDownload,
  name: string,
): Promise<void> {
  void reply.header('content-type', file.contentType);
  void reply.header('content-disposition', `attachment; filename="${name}"`);
  void reply.header('x-content-type-options', 'nosniff');
  if (file.contentLength !== undefined) void reply.header('content-length', file.contentLength);
  await reply.send(file.stream);
}
