/**
 * Every test checks what an engine checkpoint's lists reuse (store/checkpoint-memo.ts): a copy
 * found unchanged by the fields the program changes in place is compared whole too, and a field
 * changed in place that the quick comparison misses fails the test that changed it. Off in the
 * playground, where the check would cost what the lists save.
 */
import { checkListedCopies } from './lib/store/checkpoint-memo';

checkListedCopies(true);
