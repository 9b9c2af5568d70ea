import { Module } from '@nestjs/common';
import { TemplateStore } from './template.store.js';

/** Template events and each template's latest status, written by the webhook workers. */
@Module({ providers: [TemplateStore], exports: [TemplateStore] })
export class TemplatesModule {}
