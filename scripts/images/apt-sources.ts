// The Debian mirrors this machine already uses, read from its apt sources (one-line `.list`
// and deb822 `.sources` files), so the image's root filesystem comes from the same place and
// no host name is ever written into the repository. Pure: text in, URLs out.

export interface AptSource {
  types: string[];
  uris: string[];
  suites: string[];
  components: string[];
}

export interface DebianMirrors {
  /** Serves `<suite>` and `<suite>-updates`. */
  archive: string;
  /** Serves `<suite>-security`; undefined when the machine has no security source. */
  security?: string;
}

/** One-line format: `deb [opts] URI SUITE COMPONENT...`; comments and blank lines ignored. */
export function parseOneLine(text: string): AptSource[] {
  const out: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const words = line.replace(/\[[^\]]*\]/, ' ').trim().split(/\s+/);
    const [type, uri, suite, ...components] = words;
    if (!type || !uri || !suite) continue;
    out.push({ types: [type], uris: [uri], suites: [suite], components });
  }
  return out;
}

/** deb822 format: stanzas separated by blank lines; `Enabled: no` stanzas are skipped. */
export function parseDeb822(text: string): AptSource[] {
  const out: AptSource[] = [];
  const stanzas = text.split(/\n\s*\n/);
  for (const stanza of stanzas) {
    const fields = new Map<string, string>();
    let last: string | undefined;
    for (const raw of stanza.split('\n')) {
      if (raw.startsWith('#')) continue;
      if (/^\s/.test(raw) && last) {
        fields.set(last, `${fields.get(last)} ${raw.trim()}`); // continuation line
        continue;
      }
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(raw);
      if (!m) continue;
      last = m[1]!.toLowerCase();
      fields.set(last, m[2]!.trim());
    }
    if (fields.get('enabled')?.toLowerCase() === 'no') continue;
    const list = (k: string) => (fields.get(k) ?? '').split(/\s+/).filter(Boolean);
    const source = { types: list('types'), uris: list('uris'), suites: list('suites'), components: list('components') };
    if (source.types.length && source.uris.length && source.suites.length) out.push(source);
  }
  return out;
}

/**
 * The archive and security mirrors among `sources`, recognised by the machine's own Debian
 * codename (`/etc/os-release` VERSION_CODENAME): a `deb … main` source of suite `<codename>` or
 * `<codename>-updates` is the archive, `<codename>-security` the security archive. Third-party
 * sources (other suites) are ignored. The image's suite need not be the machine's: a Debian
 * mirror serves every release.
 */
export function debianMirrors(sources: AptSource[], codename: string): DebianMirrors {
  let archive: string | undefined;
  let security: string | undefined;
  for (const s of sources) {
    if (!s.types.includes('deb') || !s.components.includes('main')) continue;
    const uri = s.uris[0]!.replace(/\/+$/, '');
    if (!/^https?:\/\//.test(uri)) continue;
    if (s.suites.includes(`${codename}-security`)) security ??= uri;
    else if (s.suites.includes(codename) || s.suites.includes(`${codename}-updates`)) archive ??= uri;
  }
  if (!archive) throw new Error(`no Debian archive in the apt sources (a \`deb\` source of suite ${codename} with component main)`);
  return { archive, security };
}

/** VERSION_CODENAME from /etc/os-release text. */
export function osCodename(osRelease: string): string {
  const m = /^VERSION_CODENAME=["']?([a-z]+)["']?$/m.exec(osRelease);
  if (!m) throw new Error('no VERSION_CODENAME in /etc/os-release: not a Debian-family machine');
  return m[1]!;
}

/** mmdebstrap's mirror arguments for `suite`. */
export function mirrorLines(m: DebianMirrors, suite: string): string[] {
  return [
    `deb ${m.archive} ${suite} main`,
    `deb ${m.archive} ${suite}-updates main`,
    ...(m.security ? [`deb ${m.security} ${suite}-security main`] : []),
  ];
}
