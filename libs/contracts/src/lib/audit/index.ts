export * from './audit-report';
export * from './evidence-bundle.v1';
export * from './verify-evidence-bundle';
export * from './evidence-payloads';
