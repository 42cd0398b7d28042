import { ReauthenticationController } from '../sessions/reauthentication.controller';
import { RecentAuthentication } from '../sessions/recent-authentication';
import { Reauthenticate } from '../sessions/usecases/reauthenticate/reauthenticate.usecase';
import { CeremonyChallenges } from './ceremony-challenges';
import { DecoyCredentials } from './decoy-credentials';
import { PasskeysController } from './passkeys.controller';
import { RelyingParty } from './relying-party';
import { FinishPasskeyLogin } from './usecases/finish-passkey-login/finish-passkey-login.usecase';
import { ListPasskeys } from './usecases/list-passkeys/list-passkeys.usecase';
import { RegisterPasskey } from './usecases/register-passkey/register-passkey.usecase';
import { RemovePasskey } from './usecases/remove-passkey/remove-passkey.usecase';
import { RenamePasskey } from './usecases/rename-passkey/rename-passkey.usecase';
import { StartPasskeyLogin } from './usecases/start-passkey-login/start-passkey-login.usecase';
import { StartPasskeyRegistration } from './usecases/start-passkey-registration/start-passkey-registration.usecase';

/**
 * Passkeys and the recent-authentication step that guards them: controllers and providers the
 * gateway module registers beside its own, so they share its Redis connection, session store,
 * login throttle and second factor.
 */
export const PASSKEY_CONTROLLERS = [PasskeysController, ReauthenticationController];

export const PASSKEY_PROVIDERS = [
  RecentAuthentication,
  Reauthenticate,
  RelyingParty,
  CeremonyChallenges,
  DecoyCredentials,
  StartPasskeyRegistration,
  RegisterPasskey,
  ListPasskeys,
  RenamePasskey,
  RemovePasskey,
  StartPasskeyLogin,
  FinishPasskeyLogin,
];
