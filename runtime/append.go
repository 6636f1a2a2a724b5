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

// Append publishes records to topic without asking where they landed: with
// the transport's Append when it has one, otherwise with Publish, whose
// positions it drops. Use Publish when the positions are needed.
func Append(ctx context.Context, t Transport, topic string, records ...Outgoing) error {
	if a, ok := t.(Appender); ok {
		return a.Append(ctx, topic, records...)
	}
	_, err := t.Publish(ctx, topic, records...)
	return err
}
