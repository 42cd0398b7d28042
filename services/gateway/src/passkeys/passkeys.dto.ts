import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { EmailSchema } from '../identity/schemas';

const base64url = (max: number) => z.string().min(1).max(max).regex(/^[A-Za-z0-9_-]+$/, 'must be base64url without padding');
// Browsers may name transports newer than this list; they are kept as given.
const Transport = z.string().min(1).max(32);
const CredentialDescriptor = z.object({ id: z.string(), type: z.string(), transports: z.array(z.string()).optional() });
const Extensions = z.record(z.string(), z.unknown());

export const PasskeyNameSchema = z.string().trim().min(1, 'must not be empty').max(100);

/** PublicKeyCredentialCreationOptionsJSON: hand to `startRegistration({ optionsJSON })`. */
export const RegistrationOptions = z.object({
  challenge: z.string(),
  rp: z.object({ name: z.string(), id: z.string().optional() }),
  user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
  pubKeyCredParams: z.array(z.object({ alg: z.number().int(), type: z.string() })),
  timeout: z.number().int().optional(),
  excludeCredentials: z.array(CredentialDescriptor).optional().describe('the passkeys already registered, so the same authenticator is not added twice'),
  authenticatorSelection: z
    .object({
      authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
      residentKey: z.enum(['discouraged', 'preferred', 'required']).optional(),
      requireResidentKey: z.boolean().optional(),
      userVerification: z.enum(['discouraged', 'preferred', 'required']).optional(),
    })
    .optional(),
  hints: z.array(z.string()).optional(),
  attestation: z.string().optional(),
  attestationFormats: z.array(z.string()).optional(),
  extensions: z.object({ credProps: z.boolean().optional() }).optional(),
});
export class RegistrationOptionsDto extends createZodDto(RegistrationOptions) {}

/** PublicKeyCredentialRequestOptionsJSON: hand to `startAuthentication({ optionsJSON })`. */
export const AuthenticationOptions = z.object({
  challenge: z.string(),
  timeout: z.number().int().optional(),
  rpId: z.string().optional(),
  allowCredentials: z.array(CredentialDescriptor).optional().describe('empty or absent: any passkey of this site (discoverable)'),
  userVerification: z.enum(['discouraged', 'preferred', 'required']).optional(),
  hints: z.array(z.string()).optional(),
});
export class AuthenticationOptionsDto extends createZodDto(AuthenticationOptions) {}

export const StartPasskeyLoginCommand = z.object({
  email: EmailSchema.optional().describe('omit for a discoverable passkey (the browser offers the passkeys it holds for this site)'),
});
export type StartPasskeyLoginCommand = z.output<typeof StartPasskeyLoginCommand>;
export class StartPasskeyLoginDto extends createZodDto(StartPasskeyLoginCommand) {}

/** RegistrationResponseJSON, as `startRegistration()` resolves it. */
export const RegistrationResponse = z.object({
  id: base64url(1_366),
  rawId: base64url(1_366),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url(8_192),
    attestationObject: base64url(65_536),
    authenticatorData: base64url(65_536).optional(),
    transports: z.array(Transport).max(8).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: base64url(8_192).optional(),
  }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: Extensions,
});

export const RegisterPasskeyCommand = z.object({
  name: PasskeyNameSchema.describe('how the passkey is listed, e.g. "Work laptop"'),
  response: RegistrationResponse,
});
export type RegisterPasskeyCommand = z.output<typeof RegisterPasskeyCommand>;
export class RegisterPasskeyDto extends createZodDto(RegisterPasskeyCommand) {}

/** AuthenticationResponseJSON, as `startAuthentication()` resolves it. */
export const AuthenticationResponse = z.object({
  id: base64url(1_366),
  rawId: base64url(1_366),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url(8_192),
    authenticatorData: base64url(65_536),
    signature: base64url(8_192),
    userHandle: base64url(128).optional(),
  }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: Extensions,
});

export const FinishPasskeyLoginCommand = z.object({ response: AuthenticationResponse });
export type FinishPasskeyLoginCommand = z.output<typeof FinishPasskeyLoginCommand>;
export class FinishPasskeyLoginDto extends createZodDto(FinishPasskeyLoginCommand) {}

export const PasskeyLoginResult = z.object({
  csrfToken: z.string().describe('send as x-csrf-token with every POST/PUT/PATCH/DELETE made with the session cookie'),
  totpRequired: z.literal(false).describe('always false: a passkey with user verification is both factors'),
});
export class PasskeyLoginResultDto extends createZodDto(PasskeyLoginResult) {}

export const RenamePasskeyCommand = z.object({ name: PasskeyNameSchema });
export type RenamePasskeyCommand = z.output<typeof RenamePasskeyCommand>;
export class RenamePasskeyDto extends createZodDto(RenamePasskeyCommand) {}

export const PasskeyView = z.object({
  id: z.uuid(),
  name: z.string(),
  transports: z.array(z.string()).describe('how the browser reaches the authenticator (internal, usb, hybrid, …)'),
  synced: z.boolean().describe('a multi-device passkey, synced by its provider'),
  backedUp: z.boolean(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable(),
  lastCounterRegressionAt: z.iso.datetime().nullable().describe('last refused sign-in whose signature counter went backwards: the passkey may have been copied'),
});
export type PasskeyView = z.output<typeof PasskeyView>;
export class PasskeyViewDto extends createZodDto(PasskeyView) {}

export const PasskeyList = z.object({ items: z.array(PasskeyView) });
export class PasskeyListDto extends createZodDto(PasskeyList) {}
