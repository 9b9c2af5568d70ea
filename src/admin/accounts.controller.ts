import { Body, Controller, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountsService } from '../accounts/accounts.service.js';
import {
  AccountDto,
  CreateAccountDto,
  SetPasswordDto,
  UpdateAccountDto,
} from '../accounts/dto/account.dto.js';
import { AdminAuth } from '../auth/auth.decorators.js';
import { ApiErrors, EXAMPLE_ID, invalidRequest, thrownBy } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { ParseUuidPipe } from '../common/parse-uuid.pipe.js';

const notAUuid = thrownBy(
  () => new ParseUuidPipe().transform('42', { type: 'param', data: 'id' }),
  'id is not a UUID',
);
const notFound = new AppException('account_not_found', `Account ${EXAMPLE_ID} not found`);

@ApiTags('admin: accounts')
@AdminAuth()
@Controller('admin/accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createAccount',
    summary: 'Create an account: an admin, or an operator of some instances',
    description:
      'The person logs in with POST /admin/auth/login. An operator reaches only the inbox of ' +
      'its instances; every admin route answers it 403 forbidden. The password is stored as ' +
      'its argon2id hash.',
  })
  @ApiCreatedResponse({ type: AccountDto })
  @ApiErrors(
    invalidRequest(
      CreateAccountDto,
      { username: 'ana', display_name: 'Ana', role: 'operator', password: 'short' },
      'password too short',
    ),
    new AppException('account_exists', 'An account named ana exists already'),
    new AppException('instance_not_found', `Instance ${EXAMPLE_ID} not found`),
  )
  async create(@Body() dto: CreateAccountDto): Promise<AccountDto> {
    return AccountDto.from(
      await this.accounts.create({ ...dto, instance_ids: dto.instance_ids ?? [] }),
    );
  }

  @Get()
  @ApiOperation({ operationId: 'listAccounts', summary: 'List the accounts (never a password)' })
  @ApiOkResponse({ type: [AccountDto] })
  async list(): Promise<AccountDto[]> {
    return (await this.accounts.list()).map((account) => AccountDto.from(account));
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getAccount', summary: 'One account' })
  @ApiOkResponse({ type: AccountDto })
  @ApiErrors(notAUuid, notFound)
  async get(@Param('id', ParseUuidPipe) id: string): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.get(id));
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateAccount',
    summary: "Change an account's name, role or instances, or disable it",
    description:
      'Applies to its open sessions at once, in every process: a disabled account is logged out.',
  })
  @ApiOkResponse({ type: AccountDto })
  @ApiErrors(
    notAUuid,
    invalidRequest(UpdateAccountDto, { disabled: 'yes' }, 'disabled is not a boolean'),
    notFound,
    new AppException('instance_not_found', `Instance ${EXAMPLE_ID} not found`),
  )
  async update(
    @Param('id', ParseUuidPipe) id: string,
    @Body() dto: UpdateAccountDto,
  ): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.update(id, dto));
  }

  @Post(':id/password')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'setAccountPassword',
    summary: "Set an account's password",
    description: 'Every session opened with the old password ends at once.',
  })
  @ApiOkResponse({ type: AccountDto })
  @ApiErrors(
    notAUuid,
    invalidRequest(SetPasswordDto, { password: 'short' }, 'password too short'),
    notFound,
  )
  async setPassword(
    @Param('id', ParseUuidPipe) id: string,
    @Body() dto: SetPasswordDto,
  ): Promise<AccountDto> {
    return AccountDto.from(await this.accounts.update(id, { password: dto.password }));
  }
}
