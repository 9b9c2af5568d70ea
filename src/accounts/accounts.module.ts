import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { AccountStore } from './account.store.js';
import { AccountsService } from './accounts.service.js';

/** People who log in (admins and operators): their store and passwords. Routes live in admin/. */
@Module({
  imports: [InstancesModule],
  providers: [AccountStore, AccountsService],
  exports: [AccountsService],
})
export class AccountsModule {}
