import { forbiddenAddressReason, sameAddress } from './address-policy';

describe(forbiddenAddressReason.name, () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.1.1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.251', 'multicast'],
    ['192.0.2.10', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:10.0.0.1', 'ipv4Mapped'],
    ['::ffff:8.8.8.8', 'ipv4Mapped'],
    ['::10.0.0.1', 'ipv4Mapped'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['64:ff9b:1::1', 'rfc6052'],
    ['2002:a00:1::1', '6to4'],
    ['2001::1', 'teredo'],
    ['2001:db8::1', 'reserved'],
    ['fe80::1%eth0', 'scoped'],
    ['not-an-ip', 'not an IP address'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(forbiddenAddressReason(address)).toContain(reason);
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])('accepts the public address %s', (address) => {
    expect(forbiddenAddressReason(address)).toBeNull();
  });
});

describe(sameAddress.name, () => {
  it('compares addresses by value, not spelling', () => {
    expect(sameAddress('::ffff:a00:1', '::ffff:10.0.0.1')).toBe(true);
    expect(sameAddress('2001:db8:0:0:0:0:0:1', '2001:db8::1')).toBe(true);
    expect(sameAddress('127.0.0.1', '127.0.0.2')).toBe(false);
  });
});
