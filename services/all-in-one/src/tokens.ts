export const ENV = Symbol('ENV');
