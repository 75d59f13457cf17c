import { describe, expect, it } from 'vitest';
import { LaneIdSchema } from '../../machine/vocabulary';
import { LANE_IDS } from './lanes';

describe('LANE_IDS', () => {
  it("are the scenario schema's lane ids, in its order", () => {
    expect(LANE_IDS).toEqual(LaneIdSchema.options);
  });
});
