import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { AdminContactsController } from './admin-contacts.controller.js';
import { ContactsController } from './contacts.controller.js';
import { ContactsModule } from './contacts.module.js';
import { ContactsService } from './contacts.service.js';

/** The list, handoffs and opt-outs: client and admin routes (api processes). */
@Module({})
export class ContactsApiModule {
  /**
   * `flush`: a module that provides ContactFlush (the buffer's), `summaries`
   * one that provides ContactSummaries (the messages'). The app hands them in
   * rather than this module importing them: the buffer reads turns and
   * messages, which read contacts, so the import would close a cycle.
   */
  static register(flush: Type, summaries: Type): DynamicModule {
    return {
      module: ContactsApiModule,
      imports: [ContactsModule, InstancesModule, flush, summaries],
      controllers: [ContactsController, AdminContactsController],
      providers: [ContactsService],
    };
  }
}
