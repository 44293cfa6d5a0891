export * from '../../src/generate/scenario.js';
