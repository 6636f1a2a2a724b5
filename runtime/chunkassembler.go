package runtime

// ChunkAssembler puts the chunks of one stream back in sequence order, with
// the rules RequestStream reads a live stream by: it binds to the channel of
// the first chunk it is given and ignores other channels, drops an identical
// copy of a chunk it has, holds at most limit chunks that arrive early, and
// reports every breach as a *StreamError. Package chunkstream rebuilds
// streams from the log with it. Not safe for concurrent use.
type ChunkAssembler struct{ a *chunkAssembler }

// NewChunkAssembler returns an assembler holding at most limit early chunks
// (DefaultStreamBuffer when limit < 1).
func NewChunkAssembler(limit int) *ChunkAssembler {
	if limit < 1 {
		limit = DefaultStreamBuffer
	}
	return &ChunkAssembler{a: newChunkAssembler(limit)}
}

// Add takes one record of the stream (a chunk, or an AGDX error on its
// channel) and returns the bodies now ready in order, whether the stream is
// complete, and the error that ends it: a *StreamError for a breach, a
// *RemoteError when the responder failed. A record without a channel is
// refused with CodeInvalid.
func (c *ChunkAssembler) Add(m *Message) (ready [][]byte, finished bool, err error) {
	if !isStreamRecord(m) {
		return nil, c.a.finished, errorf(CodeInvalid, "record %s is not on a chunk stream (no channel)", m.Position)
	}
	return c.a.add(m)
}

// Next returns the sequence of the next chunk the stream needs.
func (c *ChunkAssembler) Next() uint64 { return c.a.next }

// End says whether the chunks given so far make a whole stream: nil when
// complete, a *StreamError with ErrStreamGap when a chunk before one it
// holds (or before the terminal) is missing, or with ErrStreamTimeout when
// the stream simply stops without a terminal chunk.
func (c *ChunkAssembler) End() error {
	switch {
	case c.a.finished:
		return nil
	case c.a.terminal || len(c.a.pending) > 0:
		return c.a.fail(ErrStreamGap, c.a.next)
	}
	return c.a.fail(ErrStreamTimeout, c.a.next)
}
