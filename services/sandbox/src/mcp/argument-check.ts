import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { McpErrorCodes, type PinnedMcpTool } from '@packetagent/contracts';
import { McpCallError } from './mcp-call-error';

// Formats are not checked: which ones a validator knows differs, and the server checks them anyway.
const draft7 = new Ajv({ allErrors: true, strict: false, validateFormats: false, logger: false });
const draft2020 = new Ajv2020({ allErrors: true, strict: false, validateFormats: false, logger: false });

/** Compiled once per pinned digest: the pin fixes the schema. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 512;

function validatorFor(tool: PinnedMcpTool): ValidateFunction {
  const known = compiled.get(tool.digest);
  if (known) return known;
  const dialect = typeof tool.inputSchema['$schema'] === 'string' && tool.inputSchema['$schema'].includes('2020-12') ? draft2020 : draft7;
  let validate: ValidateFunction;
  try {
    validate = dialect.compile(tool.inputSchema);
  } catch (error) {
    throw new McpCallError(McpErrorCodes.invalidArguments, `the pinned input schema of ${tool.name} cannot be used to check arguments: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(tool.digest, validate);
  return validate;
}

function issue(error: ErrorObject): string {
  const path = error.instancePath ? error.instancePath.slice(1).replaceAll('/', '.') : '(root)';
  return `${path}: ${error.message ?? error.keyword}`;
}

/** Refuses arguments the pinned input schema does not accept, naming each path, before anything is sent. */
export function checkArguments(tool: PinnedMcpTool, args: Record<string, unknown>): void {
  const validate = validatorFor(tool);
  if (validate(args)) return;
  const issues = (validate.errors ?? []).slice(0, 10).map(issue);
  throw new McpCallError(McpErrorCodes.invalidArguments, `the arguments do not match the pinned input schema of ${tool.name}: ${issues.join('; ')}`);
}
