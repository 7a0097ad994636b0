// Bounds on what one model reply can make an agent step hold or do. A reply is read as a stream
// and abandoned past MAX_REPLY_BYTES (MODEL_REPLY_TOO_LARGE); of a turn's tool calls the first
// MAX_CALLS_PER_TURN run, at most CALL_CONCURRENCY at a time, and the rest are answered with an
// error the model can read; the transcript in the step's output keeps its first messages and as
// many of the last ones as fit in MAX_TRANSCRIPT_BYTES (the model is always sent all of it).

export const MAX_REPLY_BYTES = 2 * 1024 * 1024;
export const MAX_CALLS_PER_TURN = 32;
export const CALL_CONCURRENCY = 8;
export const MAX_TRANSCRIPT_BYTES = 1024 * 1024;
