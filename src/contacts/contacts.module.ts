import { Module } from '@nestjs/common';
import { ContactStore } from './contact.store.js';
import { OptOuts } from './opt-outs.js';

/** The `contacts` table and its rules, without HTTP routes: shared by the API and the workers. */
@Module({
  providers: [ContactStore, OptOuts],
  exports: [ContactStore, OptOuts],
})
export class ContactsModule {}
