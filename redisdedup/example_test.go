package redisdedup_test

import (
	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
)

// An agent's replicas share one scope, named after their consumer group; a
// stable owner per replica lets a restarted replica resume its claims at once.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	cfg := runtime.ConsumerConfig{
		Tuning: runtime.Tuning{
			Deduplicator: redisdedup.New(rdb, "billing", redisdedup.Config{Owner: "billing-0"}),
		},
	}
	_ = cfg
}
