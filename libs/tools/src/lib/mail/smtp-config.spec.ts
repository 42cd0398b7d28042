import { parseSmtpConfig } from './smtp-config';
import { SmtpError } from './smtp-error';

const SECRET = 's3cret-Pa55word';

function refusal(value: string): SmtpError {
  try {
    parseSmtpConfig(value);
  } catch (error) {
    if (error instanceof SmtpError) return error;
    throw error;
  }
  throw new Error('expected the configuration to be refused');
}

describe(parseSmtpConfig.name, () => {
  it('reads a full configuration', () => {
    const config = parseSmtpConfig(JSON.stringify({ host: 'smtp.example.com', port: 587, security: 'starttls', user: 'bot', password: SECRET, from: 'Bot <bot@example.com>' }));

    expect(config).toEqual({ host: 'smtp.example.com', port: 587, security: 'starttls', user: 'bot', password: SECRET, from: 'Bot <bot@example.com>' });
  });

  it('reads one without a login, with an IP address for the host', () => {
    expect(parseSmtpConfig('{"host": "10.0.0.5", "port": 465, "security": "tls", "from": "bot@example.com"}')).toMatchObject({ host: '10.0.0.5', security: 'tls' });
  });

  it.each([
    ['a plaintext mode', { security: 'none' }, 'security'],
    ['a password without a user', { user: undefined }, 'user: required with a password'],
    ['a user without a password', { password: undefined }, 'password: required with a user'],
    ['a sender with a line break', { from: 'bot@example.com\r\nBcc: x@example.com' }, 'from'],
    ['two senders', { from: 'a@example.com, b@example.com' }, 'from'],
    ['a host with a path', { host: 'smtp.example.com/x' }, 'host'],
    ['a CA that is not a certificate', { ca: '-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----' }, 'ca'],
    ['an unknown field', { passwd: SECRET }, 'passwd'],
  ])('refuses %s, naming the field and not the password', (_case, change, named) => {
    const value = JSON.stringify({ host: 'smtp.example.com', port: 587, security: 'starttls', user: 'bot', password: SECRET, from: 'bot@example.com', ...change });

    const error = refusal(value);

    expect(error).toMatchObject({ code: 'smtp_config_invalid', retryable: false });
    expect(error.message).toContain(named);
    expect(error.message).not.toContain(SECRET);
  });

  it('refuses a value that is not JSON without quoting any of it', () => {
    const error = refusal(`{"host": "smtp.example.com", "password": ${SECRET}}`);

    expect(error.message).toMatch(/^the SMTP credential is not JSON/);
    expect(error.message).not.toContain(SECRET);
  });
});
