/** The authorisation machine, by concern: the machine, its types, its pure outcome helpers. */
export * from './machine';
export type * from './types';
