import { DomainError, OAuthErrorCodes } from '@packetagent/contracts';

// Messages name the server, the credential and the authorization server's reason: never a token, code or verifier.

export class OAuthDiscoveryFailedError extends DomainError {
  readonly code = OAuthErrorCodes.discoveryFailed;
}

export class OAuthClientRequiredError extends DomainError {
  readonly code = OAuthErrorCodes.clientRequired;
  constructor(issuer: string) {
    super(`the authorization server ${issuer} offers no dynamic client registration: register a client there and give its id as oauth.clientId`);
  }
}

export class OAuthRegistrationFailedError extends DomainError {
  readonly code = OAuthErrorCodes.registrationFailed;
}

export class OAuthFlowUnknownError extends DomainError {
  readonly code = OAuthErrorCodes.flowUnknown;
  constructor() {
    super('this authorization is unknown, was already used or is older than ten minutes: start connecting again');
  }
}

export class OAuthAuthorizationDeniedError extends DomainError {
  readonly code = OAuthErrorCodes.authorizationDenied;
}

export class OAuthExchangeFailedError extends DomainError {
  readonly code = OAuthErrorCodes.exchangeFailed;
}

export class OAuthReconnectRequiredError extends DomainError {
  readonly code = OAuthErrorCodes.reconnectRequired;
  constructor(
    readonly credential: string,
    readonly reason: string,
  ) {
    super(`the OAuth connection ${credential} must be connected again: ${reason}`);
  }
}

export class OAuthAudienceMismatchError extends DomainError {
  readonly code = OAuthErrorCodes.audienceMismatch;
  constructor(credential: string, resource: string, audience: string | undefined) {
    super(
      audience
        ? `the OAuth connection ${credential} was made for ${resource}, not ${audience}; its token is not handed out for another server`
        : `the OAuth connection ${credential} hands out its token only for the server it was made for (${resource}), and the request named none`,
    );
  }
}

export class OAuthNotAConnectionError extends DomainError {
  readonly code = OAuthErrorCodes.notAConnection;
  constructor(credential: string) {
    super(`the credential ${credential} is a plain secret, not an OAuth connection: connect the server with packetagent mcp connect or from the console`);
  }
}
