/**
 * The bounds a client configuration from outside is held to (config-input.ts's schemas), on
 * their own so the schema module and config.ts need not import each other.
 */
const DAY_MS = 86_400_000;

/**
 * The bounds a client configuration and rate cards from outside (a scenario's lane, the handler's
 * options) are held to, by their schemas (config-input.ts). The simulator's own bounds
 * (`LIMITS`, sim/input/limits.ts) include these: each is documented there and in the README.
 */
export const CONFIG_INPUT_LIMITS = {
  /** Any span (timeouts, TTLs, latencies, start delays): at most a year. */
  spanMs: 366 * DAY_MS,
  /** The shortest wait between two attempts (a host's retry delay): 10 ms. */
  minIntervalMs: 10,
  /** A count of retries. */
  retries: 1_000_000,
  /** Integer digits of a money amount: up to 999,999,999.999999, exact in micro-units. */
  amountDigits: 9
} as const;
