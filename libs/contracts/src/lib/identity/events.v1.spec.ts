import { EventRegistry } from '../registry';
import { IdentityEventTypes, registerIdentityEvents } from './events.v1';

describe(registerIdentityEvents.name, () => {
  const sut = registerIdentityEvents(new EventRegistry());

  it('registers every identity event type at version 1', () => {
    for (const type of Object.values(IdentityEventTypes)) expect(sut.latestVersion(type)).toBe(1);
  });

  it('accepts a well-formed api_key.created and drops fields the schema does not know', () => {
    const { data } = sut.validateForAppend('api_key.created', {
      workspaceId: 'ws_1', apiKeyId: 'abc', name: 'ci', role: 'member', expiresAt: null, secretHash: 'ff',
    });
    expect(data).toEqual({ workspaceId: 'ws_1', apiKeyId: 'abc', name: 'ci', role: 'member', expiresAt: null });
  });

  it('refuses an unknown role', () => {
    expect(() => sut.validateForAppend('member.added', { workspaceId: 'ws_1', userId: '0193a1b2-0000-7000-8000-000000000000', role: 'root' })).toThrow(
      /role/,
    );
  });
});
