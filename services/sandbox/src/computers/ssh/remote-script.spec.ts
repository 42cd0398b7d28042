import { execFileSync } from 'node:child_process';
import { killGroupCommandLine, remoteCwd, shellQuote } from './remote-script';

describe('remote command lines', () => {
  it('quotes any word so /bin/sh reads it back exactly', () => {
    for (const word of ["it's", '$(rm -rf /)', '`x`', 'a b\tc\nd', '"', '\\', '*', '']) {
      expect(execFileSync('/bin/sh', ['-c', `printf %s ${shellQuote(word)}`], { encoding: 'utf8' })).toBe(word);
    }
  });

  it('resolves a cwd against the roots, refusing what leaves them before anything connects', () => {
    const roots = ['/srv/app', '/data'];
    expect(remoteCwd('.', roots)).toEqual({ ok: true, cwd: '/srv/app' });
    expect(remoteCwd('src/../lib/', roots)).toEqual({ ok: true, cwd: '/srv/app/lib' });
    expect(remoteCwd('/data/x', roots)).toEqual({ ok: true, cwd: '/data/x' });
    expect(remoteCwd('../other', roots)).toMatchObject({ ok: false });
    expect(remoteCwd('/srv/application', roots)).toMatchObject({ ok: false });
    expect(remoteCwd('/etc', roots)).toMatchObject({ ok: false });
    expect(remoteCwd('a\u0000b', roots)).toMatchObject({ ok: false, message: 'contains a NUL character' });
  });

  it('never builds a kill for a group it must not touch', () => {
    expect(() => killGroupCommandLine(1)).toThrow();
    expect(() => killGroupCommandLine(0)).toThrow();
    expect(killGroupCommandLine(4242)).toContain('kill -s KILL -- -4242');
  });
});
