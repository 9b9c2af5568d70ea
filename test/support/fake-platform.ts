import { PlatformSimulator } from '../../simulator/platform-simulator.js';

/** The tests' platform is the shipped simulator. */
export * from '../../simulator/platform-simulator.js';

/** The simulator under the name the tests have always used. */
export type FakePlatform = PlatformSimulator;

/**
 * The simulator as the tests start it: ids numbered from 1 (`wamid.fake1`,
 * `media-1`), which tests may name. Each test file has a database of its own,
 * so these ids never meet an earlier run's.
 */
export const FakePlatform = {
  start: (port = 0): Promise<FakePlatform> =>
    PlatformSimulator.start(port, { sequentialIds: true }),
};
