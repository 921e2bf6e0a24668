/**
 * Counts in the CLI's messages: `1 error`, `2 errors`, `1 turn`.
 */

/** `n` followed by `noun`, in the plural unless `n` is 1 (`plural` for nouns whose plural is not noun + s). */
export const count = (n: number, noun: string, plural = `${noun}s`): string => `${n} ${n === 1 ? noun : plural}`
