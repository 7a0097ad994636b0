// Offsets into a model's text as people read them: 1-based line and column (in UTF-16 code
// units, as editors and JavaScript count). The line starts are found once per text, on the first
// question, so a text with thousands of problems is still scanned once.

export type Positions = (offset: number) => { line: number; column: number };

export function textPositions(text: string): Positions {
  let starts: number[] | undefined;
  return (offset) => {
    if (starts === undefined) {
      starts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  };
}
