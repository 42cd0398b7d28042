import { ValidationError } from '@packetagent/contracts';
import { createZodValidationPipe } from 'nestjs-zod';
import { ZodError } from 'zod';

/**
 * Validates every body, query and parameter typed with a zod DTO; a failure is a
 * ValidationError, so it leaves as a 400 problem with `errors: [{path, message}]`.
 */
export const GatewayValidationPipe = createZodValidationPipe({
  createValidationException: (error: unknown) => {
    if (error instanceof ZodError) {
      return new ValidationError(
        'the request is not valid',
        error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
      );
    }
    return new ValidationError('the request is not valid');
  },
});
