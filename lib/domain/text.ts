// Text received from callers is stored as UTF-8; a lone UTF-16 surrogate has no UTF-8 form and
// would be silently replaced, so it is refused instead (400).
import { Invalid } from './errors.js';

/** String.prototype.isWellFormed (Node 20; not yet in TypeScript's ES2022 lib). */
export function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

export function requireWellFormed(value: string, what: string): void {
  if (!isWellFormed(value)) throw new Invalid(`${what} contains a lone surrogate (not valid Unicode)`);
}
