import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController, type OpenAPIObject } from '@nestjs/swagger';
import { Public } from '../access/access.decorators';
import { ServiceUnavailableError } from '../identity/errors';
import { OpenApiDocumentHolder } from './openapi.document';

@ApiExcludeController()
@Controller('api/v1')
export class OpenApiController {
  constructor(private readonly holder: OpenApiDocumentHolder) {}

  @Get('openapi.json')
  @Public()
  document(): OpenAPIObject {
    if (!this.holder.document) throw new ServiceUnavailableError('the API description is built at start-up (configureGatewayApp)');
    return this.holder.document;
  }
}
