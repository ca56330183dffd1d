// The logging surface the authority layer needs; pino's Logger satisfies it. Callers pass
// structured fields only; request bodies and capability tokens are never handed to a logger.
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: Log = { info() {}, warn() {}, error() {} };
