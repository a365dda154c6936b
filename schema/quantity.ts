// Kubernetes resource quantities ("1500m", "2", "4Gi", "1e3", "0.5") parsed exactly (BigInt)
// into the ledger's integer units: cpu → millicores, memory → MiB, nvidia.com/gpu → count.
// Rounding is always UP, as Kubernetes rounds a request to its precision: the quota charged is
// never less than what the pod asks for.

const QUANTITY = /^(?<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+))(?<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;
export const QUANTITY_PATTERN = QUANTITY.source.replace(/\?<\w+>/g, '');

const BINARY: Record<string, bigint> = { Ki: 1n, Mi: 2n, Gi: 3n, Ti: 4n, Pi: 5n, Ei: 6n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** An exact non-negative rational num/den. */
interface Exact {
  num: bigint;
  den: bigint;
}

export class QuantityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuantityError';
  }
}

export function parseQuantity(input: string): Exact {
  if (input.length > 64) throw new QuantityError('quantity is too long');
  const m = QUANTITY.exec(input);
  if (!m?.groups) throw new QuantityError(`"${input}" is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)`);
  const numText = m.groups.num ?? '';
  const suffix = m.groups.suffix ?? '';
  if (numText.startsWith('-')) throw new QuantityError(`"${input}" is negative`);
  const [intPart = '', frac = ''] = numText.replace('+', '').split('.');
  let num = BigInt((intPart || '0') + frac);
  let den = 10n ** BigInt(frac.length);
  if (suffix in BINARY) {
    num *= 1024n ** (BINARY[suffix] ?? 0n);
  } else {
    const exp = suffix in DECIMAL ? (DECIMAL[suffix] ?? 0) : suffix ? Number(suffix.slice(1)) : 0;
    if (Math.abs(exp) > 30) throw new QuantityError(`"${input}" is out of range`);
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  return { num, den };
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

function toUnits(input: string, unitsPerOne: bigint, unitDivisor: bigint, max: number): number {
  const { num, den } = parseQuantity(input);
  const units = ceilDiv(num * unitsPerOne, den * unitDivisor);
  if (units > BigInt(max)) throw new QuantityError(`"${input}" is larger than the maximum allowed`);
  return Number(units);
}

/** CPU in millicores, rounded up: "1.5" → 1500, "100m" → 100, "1u" → 1. */
export const cpuMillis = (q: string): number => toUnits(q, 1000n, 1n, 1_000_000_000);

/** Memory in MiB, rounded up: "1Gi" → 1024, "1G" → 954, "1" → 1. */
export const memoryMiB = (q: string): number => toUnits(q, 1n, 1024n * 1024n, 1_000_000_000);

/** A whole count (extended resources such as nvidia.com/gpu cannot be fractional). */
export function wholeCount(q: string): number {
  const { num, den } = parseQuantity(q);
  if (num % den !== 0n) throw new QuantityError(`"${q}" must be a whole number`);
  const n = num / den;
  if (n > 1_000_000n) throw new QuantityError(`"${q}" is larger than the maximum allowed`);
  return Number(n);
}
