
// What several commands parse the same way.

/** Commander's accumulator for a repeatable option (`--input a=1 --input b=2`). */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

