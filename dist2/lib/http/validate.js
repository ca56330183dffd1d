// Turning request JSON into typed values: the one shape check of every JSON route. Schemas
// (superstruct, beside each handler) check shape and types only; a body that is not an object, a
// missing required field (also one that another field's value requires, e.g. task-start's
// `plan.payload`), a field of the wrong JSON type or an unknown field where the schema forbids
// them is 422 naming the field, before any rule runs. Rules on right-typed values (charsets,
// ranges, enumerations, state) live in lib/domain and lib/authority and throw Invalid (400).
// See docs/api.md "Request errors". The same structs are the request bodies of the OpenAPI document
// (./json-schema.ts converts them; the route table names each route's struct).
import { StructError, create } from 'superstruct';
import { Unprocessable } from '../domain/errors.js';
export function validate(body, schema) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new Unprocessable('request body must be a JSON object');
    }
    try {
        return create(body, schema);
    }
    catch (err) {
        if (err instanceof StructError) {
            const failure = err.failures()[0] ?? err;
            const where = failure.path.length > 0 ? failure.path.join('.') : 'body';
            if (failure.type === 'never')
                throw new Unprocessable(`unknown field: ${where}`);
            if (failure.value === undefined && failure.refinement === undefined)
                throw new Unprocessable(`missing required field: ${where}`);
            // superstruct quotes the received value; it is the caller's own input, but never echo it.
            throw new Unprocessable(`field ${where}: ${failure.message.replace(/,? but received: .*$/s, '')}`);
        }
        throw err;
    }
}
//# sourceMappingURL=validate.js.map