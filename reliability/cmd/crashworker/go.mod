module github.com/lasergo/laser/reliability/cmd/crashworker

go 1.26.0

// laser-go has no tagged release yet: the replace lines resolve its modules
// from this checkout, so the module builds and tidies on its own as well as
// in the repository's go.work. Drop them when the modules are tagged.
replace github.com/lasergo/laser => ../../../

replace github.com/lasergo/laser/redisdedup => ../../../redisdedup

require (
	github.com/lasergo/laser v0.0.0-00010101000000-000000000000
	github.com/lasergo/laser/redisdedup v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/apache/iggy/foreign/go v0.8.0 // indirect
	github.com/avast/retry-go/v5 v5.0.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/fxamacker/cbor/v2 v2.10.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.18.5 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
