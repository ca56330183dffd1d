// JSON Schema (2020-12, the dialect of OpenAPI 3.1) for the HTTP interface, in one place:
//  - `toJsonSchema(struct)`: the one conversion from a superstruct request schema (the struct a
//    handler validates its body with, ./validate.ts) to JSON Schema. superstruct exposes
//    `struct.type` and `struct.schema`: object → closed properties, type → open properties,
//    array → items, enums → enum, literal → const; optional is `struct.is(undefined)`, nullable
//    `struct.is(null)`. `union` and `dynamic` do not expose their members: structs built with
//    `anyOf` and `byField` below remember them, and the conversion refuses any other (a request
//    schema is either exact or the build fails). `record` becomes an object of any fields.
//  - small builders for the hand-written response schemas beside the handlers.
import { dynamic, union } from 'superstruct';
const unionMembers = new WeakMap();
const fieldVariants = new WeakMap();
/** superstruct's `union`, with its members remembered for the conversion (`anyOf`). */
export function anyOf(members) {
    const s = union(members);
    unionMembers.set(s, members);
    return s;
}
/**
 * A struct chosen by the value of one string field of an object (superstruct's `dynamic`):
 * `cases[value]`, or `otherwise` when the field holds no listed value. Converts to `if`/`then`.
 */
export function byField(field, cases, otherwise) {
    const s = dynamic((value) => {
        const v = value !== null && typeof value === 'object' ? value[field] : undefined;
        return (typeof v === 'string' && Object.hasOwn(cases, v) ? cases[v] : otherwise);
    });
    fieldVariants.set(s, { field, cases, otherwise });
    return s;
}
/** The JSON Schema of a superstruct request schema. Throws on a struct it cannot express exactly. */
export function toJsonSchema(struct) {
    const schema = convert(struct);
    // `true` (unknown) takes null already.
    return typeof schema === 'object' && struct.is(null) ? nullable(schema) : schema;
}
function convert(s) {
    const members = unionMembers.get(s);
    if (members)
        return { anyOf: members.map(toJsonSchema) };
    const variants = fieldVariants.get(s);
    if (variants) {
        const { field, cases, otherwise } = variants;
        const when = (value) => ({ properties: { [field]: value }, required: [field] });
        return {
            type: 'object',
            allOf: [
                ...Object.entries(cases).map(([value, c]) => ({ if: when({ const: value }), then: toJsonSchema(c) })),
                { if: when({ enum: Object.keys(cases) }), else: toJsonSchema(otherwise) },
            ],
        };
    }
    switch (s.type) {
        case 'string':
        case 'integer':
        case 'number':
        case 'boolean':
            return { type: s.type };
        case 'literal':
            return { const: s.schema };
        case 'enums':
            return { enum: Object.values(s.schema) };
        case 'array':
            return s.schema ? { type: 'array', items: toJsonSchema(s.schema) } : { type: 'array' };
        case 'object':
        case 'type': {
            const fields = (s.schema ?? null);
            if (!fields)
                return { type: 'object' };
            const properties = {};
            const required = [];
            for (const [name, field] of Object.entries(fields)) {
                properties[name] = toJsonSchema(field);
                if (!field.is(undefined))
                    required.push(name);
            }
            // `object` rejects fields it does not list (422); `type` ignores them (JSON Schema's default).
            return { type: 'object', properties, ...(required.length ? { required } : {}), ...(s.type === 'object' ? { additionalProperties: false } : {}) };
        }
        case 'record':
            return { type: 'object' };
        case 'unknown':
        case 'any':
            return true;
        case 'never':
            return false;
        default:
            throw new Error(`no JSON Schema for a superstruct "${s.type}" struct: build it with anyOf/byField (lib/http/json-schema.ts) or add a case`);
    }
}
// ---------------------------------------------------------------- response schema builders
export const str = { type: 'string' };
export const int = { type: 'integer' };
/** A count, index or `_at_s` time: an integer ≥ 0. */
export const uint = { type: 'integer', minimum: 0 };
export const bool = { type: 'boolean' };
/** Any JSON value. */
export const anyValue = true;
/** A content id (snapshot, tree, blob, pack): 64 lowercase hex. */
export const hex64 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
export const ref = (name) => ({ $ref: `#/components/schemas/${name}` });
export const arr = (items) => ({ type: 'array', items });
export const enumOf = (values) => ({ enum: [...values] });
export const constant = (value) => ({ const: value });
export const strArr = arr(str);
/** `schema` or null. */
export function nullable(schema) {
    if (typeof schema === 'object' && typeof schema.type === 'string' && !('$ref' in schema))
        return { ...schema, type: [schema.type, 'null'] };
    if (typeof schema === 'object' && Array.isArray(schema.enum) && !schema.enum.includes(null))
        return { ...schema, enum: [...schema.enum, null] };
    return { anyOf: [schema, { type: 'null' }] };
}
/** An object with exactly these fields, all required unless named in `optional`. */
export function obj(properties, options = {}) {
    const optional = new Set(options.optional ?? []);
    for (const name of optional)
        if (!(name in properties))
            throw new Error(`optional field ${name} is not a property`);
    return {
        type: 'object',
        ...(options.description ? { description: options.description } : {}),
        properties,
        required: Object.keys(properties).filter((k) => !optional.has(k)),
        additionalProperties: options.open === true,
    };
}
/** An `obj()` schema with more fields (those of `base` keep whether they are optional). */
export function extend(base, properties, options = {}) {
    const b = base;
    const optional = Object.keys(b.properties).filter((k) => !b.required.includes(k));
    return obj({ ...b.properties, ...properties }, { ...options, optional: [...optional, ...(options.optional ?? [])] });
}
/** The paging fields of every list body (lib/domain/paging.ts, docs/api.md "Lists and pagination"). */
export const PAGE_FIELDS = {
    count: { ...uint, description: 'rows on this page' },
    next_cursor: { ...nullable(str), description: 'pass as ?cursor= for the next page; null on the last page' },
};
//# sourceMappingURL=json-schema.js.map