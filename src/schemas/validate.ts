/**
 * Run files checked against their JSON schemas (the *.schema.json files beside this one) with Ajv, instead of
 * field-by-field checks by hand: a missing optional field is fine, a missing or mistyped required one is one line
 * naming the file and the field. Ajv is loaded on first use, so commands that read no run file never pay for it.
 */
import { createRequire } from 'node:module';
import { JetprofError } from '../util/errors.ts';
import runV1 from './run-v1.schema.json' with { type: 'json' };
import runV2 from './run-v2.schema.json' with { type: 'json' };
import runsetV1 from './runset-v1.schema.json' with { type: 'json' };
import capacityV1 from './capacity-v1.schema.json' with { type: 'json' };

/** The schemas this jetprof reads, by the value of a file's `schema` field. */
const SCHEMAS: Record<string, object> = {
  'jetprof.run/1': runV1,
  'jetprof.run/2': runV2,
  'jetprof.runset/1': runsetV1,
  'jetprof.capacity/1': capacityV1,
};

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}
type Validator = ((v: unknown) => boolean) & { errors?: AjvError[] | null };

let validators: Map<string, Validator> | undefined;

function validatorFor(schema: string): Validator | undefined {
  if (!validators) {
    const Ajv = createRequire(import.meta.url)('ajv') as new (o: object) => { compile(s: object): Validator };
    const ajv = new Ajv({ allErrors: false, strict: false });
    validators = new Map(Object.entries(SCHEMAS).map(([name, s]) => [name, ajv.compile(s)]));
  }
  return validators.get(schema);
}

/** `/setup/label` -> `setup.label`; the top level is named `(top level)`. */
function fieldName(instancePath: string, child?: unknown): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (typeof child === 'string') parts.push(child);
  return parts.length > 0 ? parts.join('.') : '(top level)';
}

/** One line for the first schema error. Pure. */
function describeSchemaError(e: AjvError): string {
  if (e.keyword === 'required') return `field ${fieldName(e.instancePath, e.params.missingProperty)} is missing`;
  if (e.keyword === 'const' || e.keyword === 'enum') {
    const allowed = (e.params.allowedValues ?? [e.params.allowedValue]) as unknown[];
    return `field ${fieldName(e.instancePath)} must be ${allowed.map((a) => JSON.stringify(a)).join(' or ')}`;
  }
  return `field ${fieldName(e.instancePath)} ${e.message ?? 'is invalid'}`;
}

/**
 * Checks a parsed file (a run, a runset, a capacity result) against the schema its `schema` field names. Throws a one-line JetprofError naming the file
 * and the field; a newer version of a known schema says which versions this jetprof reads.
 */
export function validateSchemaFile(
  value: unknown,
  path: string,
  suggestion = 'pass the file as infer --json wrote it (an edited or cut file loses fields the report needs)',
): void {
  const schema = (value as { schema?: unknown } | null)?.schema;
  const name = typeof schema === 'string' ? schema : undefined;
  const validate = name ? validatorFor(name) : undefined;
  if (!validate) {
    const m = name ? /^(jetprof\.\w+)\/(\d+)$/.exec(name) : null;
    const known = Object.keys(SCHEMAS).filter((k) => m && k.startsWith(`${m[1]}/`));
    const newest = Math.max(...known.map((k) => Number(k.split('/')[1])));
    if (m && known.length > 0 && Number(m[2]) > newest) {
      throw new JetprofError(
        'BAD_INPUT',
        `${path}: schema ${name} is newer than this jetprof reads (${known.join(', ')})`,
        { suggestion: 'update jetprof (git pull && bash scripts/setup.sh)' },
      );
    }
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: schema ${JSON.stringify(schema ?? null)} is not one this jetprof reads (${Object.keys(SCHEMAS).join(', ')})`,
      { suggestion: 'pass the file written by `infer --json R.json`' },
    );
  }
  if (!validate(value)) {
    const first = validate.errors?.[0];
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: not a valid ${name} file: ${first ? describeSchemaError(first) : 'invalid'}`,
      { suggestion },
    );
  }
}
