// How embeddings are kept and scored without pgvector. A unit-length vector is stored as a
// `cube[]`: consecutive slices of at most 100 dimensions (the `cube` extension's limit), so the
// squared Euclidean distance between two vectors is the sum of `cube_distance(...)²` over the
// slices, computed in C, rather than one SQL row per dimension (ten times slower; see
// docs/performance.md). For vectors of length 0 or 1, a·b = (|a|² + |b|² - |a-b|²) / 2, which
// is their cosine similarity (and 0 when either is the zero vector).

const SLICE = 100;

/** `{"(x1,...,x100)","(x101,...)"}`: a `cube[]` literal. */
export function cubeArrayLiteral(vector: number[]): string {
  const slices: string[] = [];
  for (let start = 0; start < vector.length; start += SLICE) {
    slices.push(`"(${vector.slice(start, start + SLICE).join(',')})"`);
  }
  return `{${slices.join(',')}}`;
}

/** |v|²: 1 for the unit vectors the store writes, 0 for a zero vector. */
export function squaredNorm(vector: number[]): number {
  return vector.some((x) => x !== 0) ? 1 : 0;
}

/** SQL for the cosine similarity of the row's `embedding`/`norm2` with a query vector. */
export function similaritySql(embedding: string, norm2: string, query: string, queryNorm2: string) {
  const distance2 = `(SELECT sum(power(cube_distance(a, b), 2)) FROM unnest(${embedding}, ${query}::cube[]) AS t(a, b))`;
  return `((${norm2} + ${queryNorm2}::float8 - ${distance2}) / 2)`;
}
