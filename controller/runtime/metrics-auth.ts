// Secured /metrics, as controller-runtime does by default since v0.19: the caller's bearer
// token is authenticated by the API server (TokenReview) and the user it names must be allowed
// `get` on the non-resource URL (SubjectAccessReview). Decisions are cached briefly per
// (token, path) so a scraper costs two API calls per TTL, not per scrape; failures to reach the
// API server answer 500 and are never cached. /healthz and /readyz stay open (see metrics.ts).
import { createHash } from 'node:crypto';
import type { KubeClient } from './kube.ts';

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The two reviews, as the API server answers them. */
export interface ReviewApi {
  authenticate(token: string): Promise<{ authenticated: boolean; user?: UserInfo; error?: string }>;
  authorize(user: UserInfo, path: string, verb: string): Promise<{ allowed: boolean; reason?: string }>;
}

export type AuthDecision = { status: 200; user: string } | { status: 401 | 403 | 500; reason: string };

export interface MetricsAuthOptions {
  api: ReviewApi;
  now?: () => number;
  /** How long an allow is trusted (default 60 s). */
  allowTtlMs?: number;
  /** How long a 401/403 is remembered (default 10 s: a role bound later counts soon). */
  denyTtlMs?: number;
  maxEntries?: number;
}

export class MetricsAuthorizer {
  readonly #o: MetricsAuthOptions;
  readonly #cache = new Map<string, { decision: AuthDecision; expires: number }>();

  constructor(o: MetricsAuthOptions) {
    this.#o = o;
  }

  /** Decides a request from its Authorization header (undefined when absent). */
  async check(authorization: string | undefined, path: string, verb = 'get'): Promise<AuthDecision> {
    const token = bearerToken(authorization);
    if (!token) return { status: 401, reason: 'a bearer token is required' };
    const now = (this.#o.now ?? Date.now)();
    const key = `${createHash('sha256').update(token).digest('hex')}|${verb}|${path}`;
    const hit = this.#cache.get(key);
    if (hit && hit.expires > now) return hit.decision;
    this.#cache.delete(key);

    let decision: AuthDecision;
    try {
      decision = await this.#review(token, path, verb);
    } catch (err) {
      return { status: 500, reason: `authentication/authorization unavailable: ${err instanceof Error ? err.message : String(err)}` };
    }
    const ttl = decision.status === 200 ? (this.#o.allowTtlMs ?? 60_000) : (this.#o.denyTtlMs ?? 10_000);
    this.#cache.set(key, { decision, expires: now + ttl });
    if (this.#cache.size > (this.#o.maxEntries ?? 1024)) this.#cache.delete(this.#cache.keys().next().value as string);
    return decision;
  }

  async #review(token: string, path: string, verb: string): Promise<AuthDecision> {
    const authn = await this.#o.api.authenticate(token);
    if (!authn.authenticated || !authn.user) return { status: 401, reason: 'the token was not accepted' };
    const authz = await this.#o.api.authorize(authn.user, path, verb);
    if (!authz.allowed) return { status: 403, reason: `${authn.user.username} may not ${verb} ${path}` };
    return { status: 200, user: authn.user.username };
  }
}

export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m?.[1];
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: UserInfo;
  error?: string;
}

/** TokenReview + SubjectAccessReview through the controller's own credentials. */
export function kubeReviewApi(client: KubeClient): ReviewApi {
  return {
    async authenticate(token) {
      const res = await client.create<{ status?: TokenReviewStatus }>('/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
      const s = res.status ?? {};
      return { authenticated: s.authenticated === true, user: s.user, error: s.error };
    },
    async authorize(user, path, verb) {
      const res = await client.create<{ status?: { allowed?: boolean; reason?: string } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb } },
      });
      return { allowed: res.status?.allowed === true, reason: res.status?.reason };
    },
  };
}
