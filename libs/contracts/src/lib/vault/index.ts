export * from './vault.events.v1';
export * from './vault.commands.v1';
export * from './sealed-credential';
export * from './oauth.v1';
