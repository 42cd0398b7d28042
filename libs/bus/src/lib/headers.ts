/** Header names the relay and the consumer runner agree on. */
export const BusHeaders = {
  MessageId: 'Nats-Msg-Id',
  GlobalPosition: 'Pa-Global-Position',
  EventId: 'Pa-Event-Id',
  EventType: 'Pa-Event-Type',
  SchemaVersion: 'Pa-Schema-Version',
  Repaired: 'Pa-Repaired',
  Traceparent: 'traceparent',
  Tracestate: 'tracestate',
  DeadLetterReason: 'Pa-Dlq-Reason',
  DeadLetterCode: 'Pa-Dlq-Code',
  DeadLetterConsumer: 'Pa-Dlq-Consumer',
  DeadLetterSubject: 'Pa-Dlq-Subject',
  DeadLetterStreamSequence: 'Pa-Dlq-Stream-Seq',
  DeadLetterDeliveries: 'Pa-Dlq-Deliveries',
  IdempotencyKey: 'Pa-Idempotency-Key',
} as const;
