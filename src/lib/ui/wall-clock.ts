/**
 * Real time, for the pages that let a person drive the client directly (their consent dialog
 * waits in real seconds): the shipped handler's real-time driver (handler/clock.ts), one of the
 * host's two (client/driver.ts). The simulation never uses this: it runs on the virtual clock.
 */
import type { Driver } from '../client/driver';
import { RealClock } from '../handler/clock';

export const wallClock: Driver = new RealClock();
