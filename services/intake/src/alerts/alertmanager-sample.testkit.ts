/** A payload as Alertmanager 0.27 sends it to a webhook receiver (also used by the HTTP tests). */
import sample from './alertmanager.sample.json';

export const alertmanagerSample = sample;
