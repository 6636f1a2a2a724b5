package memory

import (
	"context"
	"math"
	"unicode"
	"unicode/utf8"
)

// Embedder turns texts into vectors for semantic recall: one vector per
// text, in order. Plug a model client in here; the vectors it returns are
// normalized and stored with the memory records, so a restart does not
// embed again.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HashDims is the dimension of HashEmbedder's vectors.
const HashDims = 256

// HashModel names HashEmbedder's vectors on the log.
const HashModel = "laser-hash-ngram-256"

// HashEmbedder is the built-in deterministic embedder: the lowercased
// letters and digits of a text, cut into overlapping character trigrams
// (and the words themselves), hashed with a sign into 256 dimensions, and
// normalized. It is a baseline for tests and offline use, not a language
// model: it finds texts sharing spellings ("latency", "latencies"), never
// synonyms ("slow" and "latency"). Plug a real model through Embedder.
type HashEmbedder struct{}

// Embed returns one 256-dimensional unit vector per text.
func (HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = hashVector(t)
	}
	return out, nil
}

// hashVector is HashEmbedder's vector of one text.
func hashVector(text string) []float32 {
	v := make([]float32, HashDims)
	word := make([]rune, 0, 32)
	add := func(gram []rune, weight float32) {
		h := uint64(fnvOffset)
		for _, r := range gram {
			h = (h ^ uint64(r)) * fnvPrime
		}
		if h>>63 == 1 {
			weight = -weight
		}
		v[h%HashDims] += weight
	}
	flush := func() {
		if len(word) == 0 {
			return
		}
		add(word, 1)
		padded := make([]rune, 0, len(word)+2)
		padded = append(append(append(padded, ' '), word...), ' ')
		for i := 0; i+3 <= len(padded); i++ {
			add(padded[i:i+3], 0.5)
		}
		word = word[:0]
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			word = append(word, unicode.ToLower(r))
		} else {
			flush()
		}
		i += n
	}
	flush()
	normalize(v)
	return v
}

// finite reports whether v holds no NaN or infinity; one such value would
// make every score it touches NaN and freeze the ranking heap.
func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// normalize scales v to unit length in place (a zero vector stays zero), so
// cosine similarity is a dot product.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}
