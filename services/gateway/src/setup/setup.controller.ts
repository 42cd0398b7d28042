import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { Public } from '../access/access.decorators';
import { CompleteSetupDto, CompleteSetupResultDto } from './usecases/complete-setup/complete-setup.command';
import { CompleteSetup } from './usecases/complete-setup/complete-setup.usecase';

@ApiTags('setup')
@Controller('api/v1/setup')
export class SetupController {
  constructor(private readonly completeSetup: CompleteSetup) {}

  /** First run: create the owner, the first workspace and an owner API key with the setup token. */
  @Post()
  @Public()
  @ZodResponse({ status: 201, type: CompleteSetupResultDto })
  complete(@Body() body: CompleteSetupDto) {
    return this.completeSetup.execute(body);
  }
}
