package runtime

import "time"

// micros is t in Unix microseconds, the unit of every AGDX timestamp.
func micros(t time.Time) uint64 { return uint64(t.UnixMicro()) }
