// Turning request JSON into typed values. Schemas (superstruct) check shape and types only;
// a failure is 422 naming the field. Rules on values (charsets, ranges) live in lib/domain and
// throw Invalid (400). See README "Request errors".
import { StructError, create, type Struct } from 'superstruct';
import { Unprocessable } from '../domain/errors.js';

export function validate<T, S>(body: unknown, schema: Struct<T, S>): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new Unprocessable('request body must be a JSON object');
  }
  try {
    return create(body, schema);
  } catch (err) {
    if (err instanceof StructError) {
      const failure = err.failures()[0] ?? err;
      const where = failure.path.length > 0 ? failure.path.join('.') : 'body';
      if (failure.type === 'never') throw new Unprocessable(`unknown field: ${where}`);
      if (failure.value === undefined && failure.refinement === undefined) throw new Unprocessable(`missing required field: ${where}`);
      // superstruct quotes the received value; it is the caller's own input, but never echo it.
      throw new Unprocessable(`field ${where}: ${failure.message.replace(/,? but received: .*$/s, '')}`);
    }
    throw err;
  }
}
