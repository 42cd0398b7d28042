import { z } from 'zod';

// Field schemas the package and the gateway's bodies share.

/** An RFC 3339 date-time with seconds and an offset (`Z` or `±hh:mm`), upper-case `T` and `Z`. */
export const Rfc3339DateTime = z.iso.datetime({
  offset: true,
  error: (issue) => (issue.code === 'invalid_format' ? 'must be an RFC 3339 date-time with seconds and an offset, e.g. 2026-01-31T09:30:00Z' : undefined),
});
