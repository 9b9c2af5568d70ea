import { Module } from '@nestjs/common';
import { HistoryStore } from './history.store.js';

/** The history a number shared with the phone app brings: what was imported of it. */
@Module({ providers: [HistoryStore], exports: [HistoryStore] })
export class HistoryModule {}
