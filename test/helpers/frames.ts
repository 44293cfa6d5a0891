export * from '../../src/generate/frames.js';
