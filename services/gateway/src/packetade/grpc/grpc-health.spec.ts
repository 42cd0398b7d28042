import { credentials, makeClientConstructor, Server, ServerCredentials, type Client } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { PACKETADE_SERVICE, PacketAdeGrpcHealth } from './grpc-health';

type HealthClient = Client & { check(request: { service: string }, callback: (error: Error | null, response: { status: unknown }) => void): void };

describe(PacketAdeGrpcHealth.name, () => {
  let server: Server;
  let client: HealthClient;
  const sut = new PacketAdeGrpcHealth();
  const status = (service: string) =>
    new Promise<unknown>((resolve, reject) => client.check({ service }, (error, response) => (error ? reject(error) : resolve(response.status))));

  beforeAll(async () => {
    server = new Server();
    sut.addToServer(server);
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    const Health = makeClientConstructor(healthService, 'grpc.health.v1.Health');
    client = new Health(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as HealthClient;
  });
  afterAll(() => {
    client.close();
    server.forceShutdown();
  });

  it('answers SERVING while the app serves and NOT_SERVING once it begins to stop, for the server and the door', async () => {
    expect([await status(''), await status(PACKETADE_SERVICE)]).toEqual(['SERVING', 'SERVING']);

    sut.beforeApplicationShutdown();

    expect([await status(''), await status(PACKETADE_SERVICE)]).toEqual(['NOT_SERVING', 'NOT_SERVING']);
  });
});
