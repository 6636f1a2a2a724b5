package iggy

import (
	"context"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// StreamTopics returns the stream's numeric id and the names of its topics
// by numeric id. Dead-letter capsules record their source by ids; tools use
// this to name it.
func (t *Transport) StreamTopics(ctx context.Context) (uint32, map[uint32]string, error) {
	var sd *iggcon.StreamDetails
	err := t.ctl.call(ctx, "stream topics", func(c iggyClient) error {
		var err error
		sd, err = c.GetStream(t.stream)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	names := make(map[uint32]string, len(sd.Topics))
	for _, tp := range sd.Topics {
		names[tp.Id] = tp.Name
	}
	return sd.Id, names, nil
}
