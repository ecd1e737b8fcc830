package psm

// chunkAdder is a StoreAppender whose Add is AddChunk: the differential
// tests drive the appends they begin with BeginChunk through it, as
// appendpath drives a fetch's chunk.
type chunkAdder struct{ *StoreAppender }

func (c chunkAdder) Add(b *Batch) (*Outcome, error) { return c.AddChunk(b) }
