import { newRecoveryCode, recoveryCodeHash } from './recovery-codes';

describe(newRecoveryCode.name, () => {
  it('makes four groups of four unambiguous characters', () => {
    expect(newRecoveryCode()).toMatch(/^[a-km-np-z2-9]{4}(-[a-km-np-z2-9]{4}){3}$/);
  });

  it('never repeats in practice', () => {
    const codes = new Set(Array.from({ length: 200 }, newRecoveryCode));
    expect(codes.size).toBe(200);
  });
});

describe(recoveryCodeHash.name, () => {
  it('hashes a code the same however it is typed back', () => {
    expect(recoveryCodeHash(' ABCD-efgh-2345-6789 ').equals(recoveryCodeHash('abcdefgh23456789'))).toBe(true);
  });

  it('hashes different codes differently', () => {
    expect(recoveryCodeHash('abcd-efgh-2345-6789').equals(recoveryCodeHash('abcd-efgh-2345-6788'))).toBe(false);
  });
});
