package runtime

import (
	"context"
	"fmt"
)

// bootstrap creates the stream, the well-known topics and any extra topics
// with the given partition count (see Client.Bootstrap).
func bootstrap(ctx context.Context, t Transport, partitions uint32, extra ...string) error {
	if partitions == 0 {
		return &Error{Code: CodeConfig, Msg: "bootstrap needs at least one partition"}
	}
	topics := append(append([]string(nil), BootstrapTopics...), extra...)
	if err := t.EnsureTopics(ctx, partitions, topics...); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	return nil
}
