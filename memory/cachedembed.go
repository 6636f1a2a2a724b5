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

// CachedEmbedder is an Embedder that keeps every vector it computed in a
// statestore.Store, keyed by the model and a digest of the text, and asks
// the model only for texts it has not seen. A fresh Store re-embeds the
// items an enrolled peer wrote under another model on its first semantic
// recall, every restart; over a statestore.File cache a restart reads those
// vectors back instead of calling the model again. A cache that is full or
// fails is logged and skipped: the vectors are still returned.
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

// Embed returns a vector per text, from the cache where it has one.
func (c *CachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	for i, t := range texts {
		b, ok, err := c.cache.Get(ctx, c.key(t))
		if err == nil && ok && len(b)%4 == 0 && len(b) > 0 {
			out[i] = cachedVector(b)
			continue
		}
		missing, at = append(missing, t), append(at, i)
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
