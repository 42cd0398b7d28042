/** A payload as Alertmanager 0.27 sends it to a webhook receiver. */
export const alertmanagerSample = {
  receiver: 'packetagent',
  status: 'firing',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'HighErrorRate', service: 'checkout', severity: 'page' },
      annotations: { summary: 'Error rate above 5%' },
      startsAt: '2026-11-30T08:00:00.000Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=...',
      fingerprint: 'c3f1a1b2d4e5f601',
    },
    {
      status: 'firing',
      labels: { alertname: 'DiskFull', service: 'db', severity: 'ticket' },
      annotations: {},
      startsAt: '2026-11-30T08:01:00.000Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=...',
      fingerprint: 'aa00bb11cc22dd33',
    },
  ],
  groupLabels: { alertname: 'HighErrorRate' },
  commonLabels: {},
  commonAnnotations: {},
  externalURL: 'http://alertmanager:9093',
  version: '4',
  groupKey: '{}:{alertname="HighErrorRate"}',
  truncatedAlerts: 0,
};
