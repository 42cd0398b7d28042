import { answeredChallenge } from './ceremony-challenges';
import { relyingPartyFor } from './relying-party';

describe(relyingPartyFor.name, () => {
  it('takes the RP id from the host name and the origin from the public URL', () => {
    expect(relyingPartyFor('https://console.example.com/base/')).toEqual({ id: 'console.example.com', origin: 'https://console.example.com', name: 'PacketAgent' });
    expect(relyingPartyFor('http://localhost:8080')).toEqual({ id: 'localhost', origin: 'http://localhost:8080', name: 'PacketAgent' });
  });

  it('says why there are no passkeys when the URL is missing, an IP address, or plain http elsewhere', () => {
    expect(relyingPartyFor(undefined)).toMatch(/PACKETAGENT_PUBLIC_URL/);
    expect(relyingPartyFor('http://127.0.0.1:8080')).toMatch(/not an IP address/);
    expect(relyingPartyFor('https://[::1]:8080')).toMatch(/not an IP address/);
    expect(relyingPartyFor('http://console.example.com')).toMatch(/https/);
  });
});

describe(answeredChallenge.name, () => {
  it('reads the challenge from clientDataJSON, and nothing from a damaged one', () => {
    const clientData = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    expect(answeredChallenge(clientData({ type: 'webauthn.get', challenge: 'abc' }))).toBe('abc');
    expect(answeredChallenge(clientData({ type: 'webauthn.get' }))).toBeNull();
    expect(answeredChallenge(clientData({ challenge: 'x'.repeat(129) }))).toBeNull();
    expect(answeredChallenge(Buffer.from('not json').toString('base64url'))).toBeNull();
  });
});
