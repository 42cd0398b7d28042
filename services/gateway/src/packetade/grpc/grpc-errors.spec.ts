import { status as GrpcStatus } from '@grpc/grpc-js';
import { join } from 'node:path';
import { loadSync } from 'protobufjs';
import { ValidationError } from '@packetagent/contracts';
import { toProblem } from '../../http/problem';
import { NotFoundError } from '../../identity/errors';
import { CursorRevisionMismatchError } from '../feed/acknowledgements';
import { grpcErrorOf } from './grpc-errors';
import { PACKETADE_PROTO_DIR } from './grpc-server';

const root = loadSync([join(PACKETADE_PROTO_DIR, 'google/rpc/status.proto'), join(PACKETADE_PROTO_DIR, 'google/rpc/error_details.proto')]);

function decode(bytes: Buffer) {
  const status = root.lookupType('google.rpc.Status').decode(bytes) as unknown as { code: number; message: string; details: Array<{ type_url: string; value: Uint8Array }> };
  return {
    code: status.code,
    message: status.message,
    details: status.details.map((any) => {
      const name = any.type_url.replace('type.googleapis.com/', '');
      return { name, value: root.lookupType(name).toObject(root.lookupType(name).decode(any.value), { defaults: false }) };
    }),
  };
}

describe('grpcErrorOf', () => {
  it('given an invalid package, then INVALID_ARGUMENT with ErrorInfo and one field violation per issue', () => {
    const problem = toProblem(new ValidationError('invalid', [{ path: 'worker.model', message: 'required' }]), 'req-1');

    const error = grpcErrorOf(problem);

    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.details).toBe('the request is not valid: worker.model: required');
    expect(decode(error.metadata.get('grpc-status-details-bin')[0] as Buffer)).toEqual({
      code: GrpcStatus.INVALID_ARGUMENT,
      message: error.details,
      details: [
        { name: 'google.rpc.ErrorInfo', value: { reason: 'validation_failed', domain: 'packetagent', metadata: { requestId: 'req-1', httpStatus: '400' } } },
        { name: 'google.rpc.BadRequest', value: { fieldViolations: [{ field: 'worker.model', description: 'required' }] } },
      ],
    });
  });

  it.each([
    [new NotFoundError('no such deployment'), GrpcStatus.NOT_FOUND],
    [new CursorRevisionMismatchError(1, 2), GrpcStatus.FAILED_PRECONDITION],
    [new Error('a bug with a secret in it'), GrpcStatus.INTERNAL],
  ])('given %p, then its status follows the problem answer', (thrown, code) => {
    const error = grpcErrorOf(toProblem(thrown, 'req-2'));

    expect(error.code).toBe(code);
    expect(error.details).not.toContain('secret');
  });
});
