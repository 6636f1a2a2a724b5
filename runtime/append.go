package runtime

import "context"

// Appender is implemented by transports for which reporting where records
// landed costs extra work: on Iggy, whose send does not return offsets,
// Publish reads the partition back after every send to find them. Append
// publishes the same way, in the same order per partition key, but reports
// only success or failure, so it runs at the speed of the log's own send.
type Appender interface {
	Append(ctx context.Context, topic string, records ...Outgoing) error
}
