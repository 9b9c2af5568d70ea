import type { SendKind, SendRequests } from '../platform/outbound-message.builder.js';
import { SendInteractiveDto } from './dto/send-interactive.dto.js';
import {
  SendAudioDto,
  SendContactsDto,
  SendDocumentDto,
  SendImageDto,
  SendLocationDto,
  SendReactionDto,
  SendStickerDto,
  SendTextDto,
  SendVideoDto,
} from './dto/send-simple.dto.js';
import { SendTemplateDto } from './dto/send-template.dto.js';

/** The validated body class of each /send/{kind} route (also used for the agent's replies). */
export const SEND_DTO_CLASSES: { [K in SendKind]: new () => SendRequests[K] } = {
  text: SendTextDto,
  image: SendImageDto,
  document: SendDocumentDto,
  audio: SendAudioDto,
  video: SendVideoDto,
  sticker: SendStickerDto,
  location: SendLocationDto,
  contacts: SendContactsDto,
  reaction: SendReactionDto,
  template: SendTemplateDto,
  interactive: SendInteractiveDto,
};
