package memory

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/lasergo/laser/statestore"
)

// CachingEmbedder is an Embedder that can hand back the vectors it has
// cached without computing any. A Store whose Embedder is one reads the
// cache first when a recall embeds items again (see
// Config.ReembedPerRecall), and counts only the cache's misses against
// that bound. CachedEmbedder is one.
type CachingEmbedder interface {
	Embedder
	// Cached returns one entry per text: its cached vector, or nil when
	// none is cached or the cache fails. It never calls the model.
	Cached(ctx context.Context, texts []string) [][]float32
}

// CachedEmbedder is an Embedder that keeps every vector it computed in a
// statestore.Store, keyed by the model and a digest of the text, and asks
// the model only for texts it has not seen. A fresh Store embeds the items
// an enrolled peer wrote under another model again, a bounded number per
// recall (Config.ReembedPerRecall); over a statestore.File cache a restarted
// Store reads those vectors back, without counting them against the bound
// or calling the model. A cache that is full or fails is logged and
// skipped: the vectors are still returned.
type CachedEmbedder struct {
	inner Embedder
	model string
	cache statestore.Store
	log   *slog.Logger
}

// NewCachedEmbedder caches inner's vectors, named model, in cache; log
// (slog.Default when nil) hears of cache writes that failed.
func NewCachedEmbedder(inner Embedder, model string, cache statestore.Store, log *slog.Logger) (*CachedEmbedder, error) {
	switch {
	case inner == nil:
		return nil, errors.New("memory: cached embedder without an embedder")
	case model == "":
		return nil, errors.New("memory: cached embedder without a model name (vectors of two models must not share keys)")
	case cache == nil:
		return nil, errors.New("memory: cached embedder without a cache")
	}
	if log == nil {
		log = slog.Default()
	}
	return &CachedEmbedder{inner: inner, model: model, cache: cache, log: log}, nil
}

// key is where text's vector is kept: the model and a digest of the text,
// short enough for a file store.
func (c *CachedEmbedder) key(text string) string {
	sum := sha256.Sum256([]byte(text))
	model := sha256.Sum256([]byte(c.model))
	return "v/" + hex.EncodeToString(model[:8]) + "/" + hex.EncodeToString(sum[:24])
}

// Cached returns the cached vector of each text, nil where there is none.
func (c *CachedEmbedder) Cached(ctx context.Context, texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		b, ok, err := c.cache.Get(ctx, c.key(t))
		if err == nil && ok && len(b)%4 == 0 && len(b) > 0 {
			out[i] = cachedVector(b)
		}
	}
	return out
}

// Embed returns a vector per text, from the cache where it has one.
func (c *CachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := c.Cached(ctx, texts)
	var missing []string
	var at []int
	for i, t := range texts {
		if out[i] == nil {
			missing, at = append(missing, t), append(at, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := c.inner.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missing) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(missing))
	}
	for j, v := range vecs {
		out[at[j]] = v
		if err := c.cache.Set(ctx, c.key(missing[j]), cacheVector(v)); err != nil {
			c.log.Warn("memory: vector not cached", "model", c.model, "error", err)
		}
	}
	return out, nil
}

func cacheVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func cachedVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
