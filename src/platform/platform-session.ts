import { INVALID_TOKEN_PLATFORM_CODE, PlatformError } from './platform.errors.js';
import type { MediaDownload, MediaInfo, MediaUpload, PlatformClient } from './platform-client.js';
import type { PlatformMessage } from './platform-message.js';
import type {
  PhoneNumberDetails,
  PhoneNumberRecord,
  PlatformTemplate,
  PlatformTemplateCreated,
  PlatformTemplateDraft,
  RegisterRequest,
  RequestCodeRequest,
} from './platform.types.js';

/** Which number a session acts for, and with what token. */
export interface PlatformCredentials {
  phoneNumberId: string;
  channelAccountId: string;
  /** The decrypted access token. */
  token: string;
}

/**
 * The platform calls of one business number, bound to its credentials once
 * (as a provider is built with its credentials), so callers never handle the
 * token. The token is a private field: it does not serialize or log.
 */
export class PlatformSession {
  readonly phoneNumberId: string;
  readonly channelAccountId: string;
  readonly #token: string;

  constructor(
    private readonly client: PlatformClient,
    credentials: PlatformCredentials,
    /** Told when the platform refuses the token (code 190), on any call. */
    private readonly onTokenRejected?: () => void,
  ) {
    this.phoneNumberId = credentials.phoneNumberId;
    this.channelAccountId = credentials.channelAccountId;
    this.#token = credentials.token;
  }

  phoneNumber(): Promise<PhoneNumberDetails> {
    return this.watch(this.client.getPhoneNumber(this.phoneNumberId, this.#token));
  }

  /** The business account's numbers. */
  phoneNumbers(): Promise<PhoneNumberRecord[]> {
    return this.watch(this.client.listPhoneNumbers(this.channelAccountId, this.#token));
  }

  register(request: RegisterRequest): Promise<void> {
    return this.watch(this.client.register(this.phoneNumberId, this.#token, request));
  }

  requestCode(request: RequestCodeRequest): Promise<void> {
    return this.watch(this.client.requestCode(this.phoneNumberId, this.#token, request));
  }

  verifyCode(code: string): Promise<void> {
    return this.watch(this.client.verifyCode(this.phoneNumberId, this.#token, code));
  }

  /** Sends one message; its wamid. `beforeRetry` gives the message a retry sends (see the client). */
  sendMessage(
    message: PlatformMessage,
    beforeRetry?: () => Promise<PlatformMessage>,
  ): Promise<string> {
    return this.watch(
      this.client.sendMessage(this.phoneNumberId, this.#token, message, beforeRetry),
    );
  }

  /** One page of the business account's templates. */
  templates(after?: string): Promise<{ templates: PlatformTemplate[]; next?: string }> {
    return this.watch(this.client.listTemplates(this.channelAccountId, this.#token, after));
  }

  createTemplate(draft: PlatformTemplateDraft): Promise<PlatformTemplateCreated> {
    return this.watch(this.client.createTemplate(this.channelAccountId, this.#token, draft));
  }

  deleteTemplate(name: string, templateId?: string): Promise<void> {
    return this.watch(
      this.client.deleteTemplate(this.channelAccountId, this.#token, name, templateId),
    );
  }

  /** A marketing template through the marketing messages endpoint; its wamid. */
  sendMarketingMessage(message: PlatformMessage): Promise<string> {
    return this.watch(this.client.sendMarketingMessage(this.phoneNumberId, this.#token, message));
  }

  markReadWithTyping(wamid: string): Promise<void> {
    return this.watch(this.client.markReadWithTyping(this.phoneNumberId, this.#token, wamid));
  }

  uploadMedia(upload: MediaUpload): Promise<string> {
    return this.watch(this.client.uploadMedia(this.phoneNumberId, this.#token, upload));
  }

  downloadMedia(mediaId: string): Promise<MediaDownload> {
    return this.watch(this.client.downloadMedia(mediaId, this.#token, this.phoneNumberId));
  }

  mediaInfo(mediaId: string): Promise<MediaInfo> {
    return this.watch(this.client.mediaInfo(mediaId, this.#token, this.phoneNumberId));
  }

  private watch<T>(call: Promise<T>): Promise<T> {
    if (!this.onTokenRejected) return call;
    return call.catch((error: unknown) => {
      if (
        error instanceof PlatformError &&
        error.failure.platformCode === INVALID_TOKEN_PLATFORM_CODE
      ) {
        this.onTokenRejected?.();
      }
      throw error;
    });
  }
}
