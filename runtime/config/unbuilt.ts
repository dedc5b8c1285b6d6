// Settings of the official schema that Graphdock does not implement yet. Accepting one and
// ignoring it would silently serve a project differently from what it asks for (worst case:
// unprotected), so loading refuses them with a message naming each.
import type { LanggraphConfig } from './schema.js';

interface Unbuilt {
  key: string;
  /** Whether the config uses the setting in a way that needs the missing feature. */
  used(config: LanggraphConfig): boolean;
  why: string;
}

const UNBUILT: Unbuilt[] = [
  {
    key: 'encryption',
    used: (c) => c.encryption !== undefined,
    why: 'custom encryption at rest is not supported yet',
  },
];

/** One line per setting the config uses that Graphdock cannot honour; empty when it can. */
export function unbuiltSettings(config: LanggraphConfig): string[] {
  return UNBUILT.filter((u) => u.used(config)).map(
    (u) => `${u.key}: not supported by Graphdock: ${u.why}; remove it to start`,
  );
}
