import { execKey, ExecIdSchema, execLiveSubject, SECRET_LIKE_ENV_NAME } from './sandbox.commands.v1';

describe('SECRET_LIKE_ENV_NAME', () => {
  it.each(['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'NPM_TOKEN', 'DB_PASSWORD', 'OPENAI_API_KEY', 'APIKEY', 'SSH_PRIVATE_KEY', 'AUTH', 'BASIC_AUTH', 'SESSION_ID', 'COOKIE', 'GOOGLE_APPLICATION_CREDENTIALS', 'access_key'])('refuses %s', (name) => {
    expect(SECRET_LIKE_ENV_NAME.test(name)).toBe(true);
  });

  it.each(['CI', 'NODE_ENV', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'AUTHORS_FILE', 'LANG', 'TZ', 'DEBUG', 'SESSIONS_DIR_NAME_LEN'])('lets %s through', (name) => {
    expect(SECRET_LIKE_ENV_NAME.test(name)).toBe(false);
  });
});

describe('exec ids', () => {
  it('take any printable ASCII a run effect key holds, and name files and subjects by a fixed-length key', () => {
    const id = 'run-0193:call/../../etc?*>.x';
    expect(ExecIdSchema.safeParse(id).success).toBe(true);
    expect(execKey(id)).toMatch(/^[0-9a-f]{32}$/);
    expect(execLiveSubject('t1', 'ws', id)).toBe(`t1.pa.live.sandbox.ws.${execKey(id)}`);
    expect(ExecIdSchema.safeParse('has space').success).toBe(false);
    expect(ExecIdSchema.safeParse('naïve').success).toBe(false);
  });
});
