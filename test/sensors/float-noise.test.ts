// Aggregated means are printed without float noise; raw readings are never rounded.
import t from 'tap';
import { withoutFloatNoise } from '../../src/sensors/history.js';

t.test('a mean loses the noise of float division, not its digits', async (t) => {
  t.not((4.12 + 4.07 + 3.99) / 3, 4.06, 'the float mean is noisy (4.0600000000000005)');
  t.equal(withoutFloatNoise((4.12 + 4.07 + 3.99) / 3), 4.06);
  t.equal(withoutFloatNoise((1.1 + 2.2 + 3.3) / 3), 2.2);
  t.equal(withoutFloatNoise(-0.1 - 0.2), -0.3);
  // a mean with many real digits keeps them to 1e-10 relative
  const mean = 1234.5678 / 7;
  t.ok(Math.abs(withoutFloatNoise(mean) - mean) <= Math.abs(mean) * 1e-11);
  t.equal(withoutFloatNoise(0), 0);
});
