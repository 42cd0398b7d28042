import { currentTotp, matchTotp, newTotpSecret, totpUri } from './totp';

describe(matchTotp.name, () => {
  const secret = newTotpSecret();
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);

  it('returns the time step of a current code', () => {
    expect(matchTotp(secret, currentTotp(secret, now), now)).toBe(Math.floor(now / 30_000));
  });

  it('accepts the previous step for clock drift and reports that step', () => {
    expect(matchTotp(secret, currentTotp(secret, now - 30_000), now)).toBe(Math.floor(now / 30_000) - 1);
  });

  it('refuses a code two steps old', () => {
    expect(matchTotp(secret, currentTotp(secret, now - 60_000), now)).toBeNull();
  });

  it('refuses anything that is not six digits', () => {
    expect(matchTotp(secret, 'abcdef', now)).toBeNull();
  });
});

describe(totpUri.name, () => {
  it('builds an otpauth URI naming the issuer and the account', () => {
    const uri = totpUri('JBSWY3DPEHPK3PXP', 'a@example.com');
    expect(uri).toMatch(/^otpauth:\/\/totp\/PacketAgent:a%40example\.com\?/);
    expect(uri).toContain('secret=JBSWY3DPEHPK3PXP');
  });
});
