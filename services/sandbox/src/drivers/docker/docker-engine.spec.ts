import Dockerode from 'dockerode';
import { connectDocker, dockerOptionsFromHost, engineAddress, unreachableDetail } from './docker-engine';

describe(dockerOptionsFromHost.name, () => {
  it.each([
    ['/var/run/docker.sock', { socketPath: '/var/run/docker.sock' }],
    ['unix:///run/user/1000/docker.sock', { socketPath: '/run/user/1000/docker.sock' }],
    ['tcp://docker.internal:2375', { protocol: 'http', host: 'docker.internal', port: 2375 }],
    ['tcp://10.0.0.5', { protocol: 'http', host: '10.0.0.5', port: 2375 }],
    ['https://docker.internal:2376', { protocol: 'https', host: 'docker.internal', port: 2376 }],
  ])('reads %s', (address, expected) => {
    expect(dockerOptionsFromHost(address)).toEqual(expected);
  });

  it('refuses a scheme it cannot dial', () => {
    expect(() => dockerOptionsFromHost('ssh://me@host')).toThrow(/unsupported Docker host/);
  });
});

describe(connectDocker.name, () => {
  const saved = process.env['DOCKER_HOST'];
  afterEach(() => {
    if (saved === undefined) delete process.env['DOCKER_HOST'];
    else process.env['DOCKER_HOST'] = saved;
  });

  it('dials the socket it was given even when DOCKER_HOST names a TCP host', async () => {
    process.env['DOCKER_HOST'] = 'tcp://elsewhere:2375';

    const sut = connectDocker({ socketPath: '/tmp/engine.sock' });

    await expect(engineAddress(sut)).resolves.toBe('/tmp/engine.sock');
  });

  it('uses a client it was given as it is', () => {
    const client = new Dockerode({ socketPath: '/tmp/engine.sock' });

    expect(connectDocker(client)).toBe(client);
  });

  it('names a TCP engine by its URL', async () => {
    await expect(engineAddress(connectDocker({ host: 'docker.internal', port: 2375 }))).resolves.toBe('http://docker.internal:2375');
  });
});

describe(unreachableDetail.name, () => {
  const systemError = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

  it('says how to get an engine when nothing listens', () => {
    expect(unreachableDetail('/var/run/docker.sock', systemError('ECONNREFUSED'))).toBe(
      'no Docker engine at /var/run/docker.sock (ECONNREFUSED): install Docker or set PACKETAGENT_SANDBOX_DOCKER_HOST',
    );
  });

  it('says how to get access when the socket refuses the service user', () => {
    expect(unreachableDetail('/var/run/docker.sock', systemError('EACCES'))).toMatch(/^permission denied on the Docker socket \/var\/run\/docker.sock: .*docker group/);
  });

  it('is null when the engine answered', () => {
    expect(unreachableDetail('/var/run/docker.sock', Object.assign(new Error('(HTTP code 500) server error'), { statusCode: 500 }))).toBeNull();
  });
});
