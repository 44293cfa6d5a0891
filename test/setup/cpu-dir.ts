/** Where e2e files leave their CPU times (test/setup/cpu-time.ts) for the summary: an environment variable the config sets. */
export const CPU_DIR_ENV = 'MPA_DISSECT_TEST_CPU_DIR';
