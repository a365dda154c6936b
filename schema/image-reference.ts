// Image references read exactly as the container runtime reads them: the grammar and the
// normalization of github.com/distribution/reference (regexp.go, reference.go `Parse`,
// normalize.go `ParseNormalizedNamed` / `splitDockerDomain`), which kubelet and containerd use.
// A first component is a registry host when it contains '.' or ':', is exactly `localhost`, or
// contains an upper-case letter: `Evil/model:1` is pulled from the host `Evil`, not from Docker
// Hub. Pure: no I/O.

/** The library's grammar, piece by piece (regexp.go), as RE2/ECMAScript-compatible sources. */
const alphanumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const domainNameComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const optionalPort = '(?::[0-9]+)?';
const tag = '[\\w][\\w.-]{0,127}';
const digestPat = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}';
const ipv6address = '\\[(?:[a-fA-F0-9:]+)\\]';
const domainName = `${domainNameComponent}(?:\\.${domainNameComponent})*`;
const host = `(?:${domainName}|${ipv6address})`;
const domainAndPort = `${host}${optionalPort}`;
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`;
const remoteName = `${pathComponent}(?:/${pathComponent})*`;
const namePat = `(?:${domainAndPort}/)?${remoteName}`;

/** `^domain[:port]$` (the library's DomainRegexp, anchored). */
export const ANCHORED_DOMAIN = new RegExp(`^${domainAndPort}$`);
/** `^(?:(domain)/)?(path)$`: the name split into its domain and its path. */
export const ANCHORED_NAME = new RegExp(`^(?:(${domainAndPort})/)?(${remoteName})$`);
/** The whole reference, anchored: name, tag and digest captured. Also the CRD's `pattern` for `image`. */
export const REFERENCE_PATTERN = `^(${namePat})(?::(${tag}))?(?:@(${digestPat}))?$`;
export const REFERENCE = new RegExp(REFERENCE_PATTERN);
/** 64 lower-case hex characters: an image id, never a repository name. */
export const ANCHORED_IDENTIFIER = /^([a-f0-9]{64})$/;

/** The longest repository path the library accepts. */
export const PATH_MAX = 255;
const DEFAULT_DOMAIN = 'docker.io';
const LEGACY_DEFAULT_DOMAIN = 'index.docker.io';
const OFFICIAL_REPO_PREFIX = 'library/';

export interface ImageReference {
  /** Registry host[:port] as written (case kept); '' when `Parse` found no domain. */
  domain: string;
  /** Repository path on that registry, e.g. `library/nginx`. */
  path: string;
  tag?: string;
  digest?: string;
}

export type ReferenceResult = { ok: true; ref: ImageReference } | { ok: false; reason: string };

const fail = (reason: string): ReferenceResult => ({ ok: false, reason });

/**
 * The digest, checked as github.com/opencontainers/go-digest's `Parse` does with only sha256
 * registered (the algorithm every runtime has; the library's own tests register only it).
 */
function digestIssue(digest: string): string | undefined {
  const sep = digest.indexOf(':');
  const algorithm = digest.slice(0, sep);
  const encoded = digest.slice(sep + 1);
  if (algorithm !== 'sha256') return `unsupported digest algorithm "${algorithm}" (only sha256)`;
  if (encoded.length !== 64) return 'invalid digest length (sha256 has 64 hex characters)';
  if (!/^[a-f0-9]{64}$/.test(encoded)) return 'invalid digest: sha256 is 64 lower-case hex characters';
  return undefined;
}

/** The library's `Parse`: the reference as written, without Docker Hub defaults. */
export function parseReference(s: string): ReferenceResult {
  if (s === '') return fail('repository name must have at least one component');
  const m = REFERENCE.exec(s);
  if (!m) {
    const lower = s.toLowerCase();
    if (lower !== s && REFERENCE.test(lower)) return fail('repository name must be lowercase');
    return fail('invalid reference format');
  }
  const name = ANCHORED_NAME.exec(m[1] ?? '');
  const domain = name?.[1] ?? '';
  const path = name?.[2] ?? m[1] ?? '';
  if (path.length > PATH_MAX) return fail(`repository name must not be more than ${PATH_MAX} characters`);
  const ref: ImageReference = { domain, path };
  if (m[2] !== undefined) ref.tag = m[2];
  if (m[3] !== undefined) {
    const issue = digestIssue(m[3]);
    if (issue) return fail(issue);
    ref.digest = m[3];
  }
  return { ok: true, ref };
}

/** The library's `splitDockerDomain`: the registry the runtime contacts and the rest of the reference. */
export function splitDockerDomain(name: string): { domain: string; remainder: string } {
  const slash = name.indexOf('/');
  if (slash < 0) return { domain: DEFAULT_DOMAIN, remainder: OFFICIAL_REPO_PREFIX + name };
  const maybeDomain = name.slice(0, slash);
  const rest = name.slice(slash + 1);
  let domain: string;
  let remainder: string;
  if (maybeDomain === 'localhost') [domain, remainder] = [maybeDomain, rest];
  else if (maybeDomain === LEGACY_DEFAULT_DOMAIN) [domain, remainder] = [DEFAULT_DOMAIN, rest];
  else if (maybeDomain.includes('.') || maybeDomain.includes(':')) [domain, remainder] = [maybeDomain, rest];
  else if (maybeDomain.toLowerCase() !== maybeDomain) [domain, remainder] = [maybeDomain, rest];
  else [domain, remainder] = [DEFAULT_DOMAIN, name];
  if (domain === DEFAULT_DOMAIN && !remainder.includes('/')) remainder = OFFICIAL_REPO_PREFIX + remainder;
  return { domain, remainder };
}

/** The library's `ParseNormalizedNamed`: `nginx` → docker.io / library/nginx, as the runtime pulls it. */
export function parseNormalizedNamed(s: string): ReferenceResult {
  if (ANCHORED_IDENTIFIER.test(s)) return fail('cannot be a 64-character hexadecimal string (an image id)');
  const { domain, remainder } = splitDockerDomain(s);
  const tagSep = remainder.indexOf(':');
  const remote = tagSep > -1 ? remainder.slice(0, tagSep) : remainder;
  if (remote.toLowerCase() !== remote) return fail(`repository name (${remote}) must be lowercase`);
  return parseReference(`${domain}/${remainder}`);
}

/** `domain/path[:tag][@digest]`, the fully qualified form the runtime pulls. */
export function referenceString(ref: ImageReference): string {
  const name = ref.domain ? `${ref.domain}/${ref.path}` : ref.path;
  return `${name}${ref.tag !== undefined ? `:${ref.tag}` : ''}${ref.digest !== undefined ? `@${ref.digest}` : ''}`;
}

/**
 * An image as ModelDock accepts it: what `ParseNormalizedNamed` accepts, where the registry the
 * library names is the one the runtime contacts, on a port that exists.
 */
export function parseImage(s: string): ReferenceResult {
  const parsed = parseNormalizedNamed(s);
  if (!parsed.ok) return parsed;
  const { domain } = splitDockerDomain(s);
  // `a_b.c/d`: the first component looks like a host (a '.') but is not one, so the library finds
  // no domain while the runtime's resolver contacts `a_b.c`. Never accepted.
  if (parsed.ref.domain !== domain) return fail(`the registry part "${domain.slice(0, 100)}" is not a valid host[:port]`);
  const port = /:([0-9]+)$/.exec(domain)?.[1];
  if (port !== undefined && (port.length > 5 || Number(port) < 1 || Number(port) > 65_535)) return fail(`registry port ${port.slice(0, 10)} is not 1..65535`);
  return parsed;
}
