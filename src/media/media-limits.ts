export type MediaCategory = 'image' | 'video' | 'audio' | 'sticker' | 'document';

const MB = 1024 * 1024;

export const MEDIA_MAX_BYTES: Record<MediaCategory, number> = {
  image: 5 * MB,
  video: 16 * MB,
  audio: 16 * MB,
  sticker: 500 * 1024,
  document: 100 * MB,
};

/** The largest upload of any type: the request body limit of POST /media/upload. */
export const MAX_UPLOAD_BYTES = MEDIA_MAX_BYTES.document;

/** The content types the platform takes, by category. */
const CATEGORY_BY_TYPE: Record<string, MediaCategory> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'video/mp4': 'video',
  'video/3gpp': 'video',
  'audio/aac': 'audio',
  'audio/amr': 'audio',
  'audio/mpeg': 'audio',
  'audio/mp4': 'audio',
  'audio/ogg': 'audio',
  'image/webp': 'sticker',
  'text/plain': 'document',
  'application/pdf': 'document',
  'application/msword': 'document',
  'application/vnd.ms-excel': 'document',
  'application/vnd.ms-powerpoint': 'document',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'document',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'document',
};

export const SUPPORTED_MEDIA_TYPES = Object.keys(CATEGORY_BY_TYPE);

/** The category of a content type (parameters such as `; codecs=opus` ignored), or null. */
export function mediaCategory(contentType: string): MediaCategory | null {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return CATEGORY_BY_TYPE[type] ?? null;
}

export function describeLimit(bytes: number): string {
  return bytes >= MB ? `${bytes / MB} MB` : `${bytes / 1024} KB`;
}
