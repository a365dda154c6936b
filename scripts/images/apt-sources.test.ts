import { describe, expect, it } from 'vitest';
import { debianMirrors, mirrorLines, osCodename, parseDeb822, parseOneLine } from './apt-sources.ts';

// Host names here are placeholders (.invalid): the real ones are read from the machine.
const deb822 = `Types: deb
# a comment
URIs: http://mirror.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.invalid/debian-security
Suites: bookworm-security
Components: main

Types: deb
URIs: http://disabled.invalid/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: https://thirdparty.invalid/node_20.x
Suites: nodistro
Components: main
`;

describe('apt sources', () => {
  it('reads deb822 stanzas, skipping disabled ones', () => {
    const s = parseDeb822(deb822);
    expect(s.map((x) => x.uris[0])).toEqual(['http://mirror.invalid/debian', 'http://mirror.invalid/debian-security', 'https://thirdparty.invalid/node_20.x']);
    expect(s[0]!.suites).toEqual(['bookworm', 'bookworm-updates']);
  });

  it('reads one-line sources with options and comments', () => {
    const s = parseOneLine('# x\ndeb [arch=amd64 signed-by=/k.gpg] http://m.invalid/debian trixie main contrib\ndeb-src http://m.invalid/debian trixie main\n\n');
    expect(s).toEqual([
      { types: ['deb'], uris: ['http://m.invalid/debian'], suites: ['trixie'], components: ['main', 'contrib'] },
      { types: ['deb-src'], uris: ['http://m.invalid/debian'], suites: ['trixie'], components: ['main'] },
    ]);
  });

  it('picks the archive and security mirrors by the machine codename, ignoring third-party suites', () => {
    const m = debianMirrors(parseDeb822(deb822), 'bookworm');
    expect(m).toEqual({ archive: 'http://mirror.invalid/debian', security: 'http://mirror.invalid/debian-security' });
    expect(mirrorLines(m, 'bookworm')).toEqual([
      'deb http://mirror.invalid/debian bookworm main',
      'deb http://mirror.invalid/debian bookworm-updates main',
      'deb http://mirror.invalid/debian-security bookworm-security main',
    ]);
  });

  it('serves another release from the same mirrors; no security source → no security line', () => {
    const m = debianMirrors(parseOneLine('deb http://m.invalid/debian/ trixie main\n'), 'trixie');
    expect(mirrorLines(m, 'bookworm')).toEqual(['deb http://m.invalid/debian bookworm main', 'deb http://m.invalid/debian bookworm-updates main']);
  });

  it('fails clearly without a Debian archive', () => {
    expect(() => debianMirrors(parseOneLine('deb https://thirdparty.invalid/x nodistro main\n'), 'bookworm')).toThrow(/no Debian archive/);
  });

  it('reads the codename from os-release', () => {
    expect(osCodename('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_CODENAME=bookworm\n')).toBe('bookworm');
    expect(() => osCodename('NAME=x\n')).toThrow(/VERSION_CODENAME/);
  });
});
