/** The tests' platform is the shipped simulator. */
export * from '../../simulator/platform-simulator.js';
