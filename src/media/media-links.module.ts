import { Module } from '@nestjs/common';
import { MediaLinks } from './media-links.js';

/** The signed media URLs the agent's payload carries (made by the workers, opened by the api). */
@Module({ providers: [MediaLinks], exports: [MediaLinks] })
export class MediaLinksModule {}
