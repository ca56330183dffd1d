export const silentLog = { info() { }, warn() { }, error() { } };
//# sourceMappingURL=logger.js.map