export * from '../../src/generate/mpa-encoder.js';
