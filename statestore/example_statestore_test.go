package statestore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lasergo/laser/statestore"
)

// A bounded store answers a write past its bound with ErrFull.
func ExampleStore() {
	ctx := context.Background()
	var s statestore.Store
	s, _ = statestore.NewMemory(statestore.Limits{MaxKeys: 1})
	_ = s.Set(ctx, "cursor/chat-7", []byte("12"))
	v, ok, _ := s.Get(ctx, "cursor/chat-7")
	fmt.Println(string(v), ok)
	err := s.Set(ctx, "cursor/chat-8", []byte("0"))
	fmt.Println(errors.Is(err, statestore.ErrFull), err)
	// Output:
	// 12 true
	// true statestore: store full: setting "cursor/chat-8" would hold 2 keys, over MaxKeys 1
}
