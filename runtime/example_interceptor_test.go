package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

type requestIDKey struct{}

// stamp hands the handler a request id derived from the message and prints
// each attempt's result. Embedding MiddlewareDefaults supplies the two
// hooks every Middleware has.
type stamp struct{ runtime.MiddlewareDefaults }

func (stamp) Intercept(c *runtime.Ctx, next func(*runtime.Ctx) error) error {
	err := next(c.WithContext(context.WithValue(c, requestIDKey{}, "req-"+c.Message().Provenance.IdempotencyKey)))
	fmt.Printf("attempt %d: %v\n", c.Attempt(), err)
	return err
}

// An Interceptor wraps each attempt of the handler: it can hand the handler
// a derived context (here a value; a span in package otellaser) and sees
// the attempt's result, so it can time, log or translate errors.
func ExampleInterceptor() {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	if err := runtime.NewClient(log, runtime.ClientConfig{}).Bootstrap(ctx, 1, "orders"); err != nil {
		panic(err)
	}
	done := make(chan struct{})
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic: "orders",
		Group: "packer",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			if c.Attempt() == 1 {
				return errors.New("printer jammed")
			}
			fmt.Println("packing under", c.Value(requestIDKey{}))
			close(done)
			return nil
		}),
		Client:     runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Middleware: []runtime.Middleware{stamp{}},
		Tuning: runtime.Tuning{
			Retry: runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Nanosecond},
		},
	})
	if err != nil {
		panic(err)
	}
	stop := make(chan struct{})
	result := make(chan error, 1)
	go func() { result <- c.Run(ctx, nil, stop) }()
	prov := wire.Provenance{Conversation: wire.IDFromUint128(0, 1), IdempotencyKey: "order-7"}
	if _, err := runtime.NewClient(log, runtime.ClientConfig{}).SendPlain(ctx, "orders", prov, []byte("order 7")); err != nil {
		panic(err)
	}
	<-done
	close(stop)
	if err := <-result; err != nil {
		panic(err)
	}
	// Output:
	// attempt 1: printer jammed
	// packing under req-order-7
	// attempt 2: <nil>
}
