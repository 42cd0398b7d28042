export { IntakeModule, type IntakeOptions } from './intake.module';
export { webhookSignature } from './webhooks/webhook-signature';
