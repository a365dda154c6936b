// The admission policy the tests admit under (the shipped bounds, no defaults, any registry: `*`),
// and a parser that turns a request body into the admission the Worker would make of it.
import { admissionRequestSchema, toAdmission, type AdmissionPolicy, type ParsedAdmission } from '../../schema/admission.ts';
import { ANY_REGISTRY } from '../../schema/policy.ts';

export const testPolicy = (over: Partial<AdmissionPolicy> = {}): AdmissionPolicy => ({
  defaults: {},
  min: { cpu: 10, memory: 16 },
  max: { cpu: 16_000, memory: 65_536 },
  allowedRegistries: ANY_REGISTRY,
  ...over,
});

/** The admission of a valid body under `policy`; throws when the schema or the policy refuses it. */
export function admissionOf(body: unknown, policy: AdmissionPolicy = testPolicy(), maxReplicas?: number): ParsedAdmission {
  const decision = toAdmission(admissionRequestSchema(maxReplicas).parse(body), policy);
  if (!decision.ok) throw new Error(`refused: ${JSON.stringify(decision.issues)}`);
  return decision.admission;
}
