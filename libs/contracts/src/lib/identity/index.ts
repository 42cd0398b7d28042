export * from './roles';
export * from './events.v1';
export * from './packetade.events.v1';
