package memory

import "math"

// A vector held for semantic recall is quantized to 7-bit levels in
// [-63, 63], biased by laneBias into [1, 127] and packed four to a 64-bit
// word, one level per 16-bit lane. Multiplying an item's word by the
// query's word with its lanes reversed puts the sum of the four lanes'
// products in the top 16 bits (four products of at most 127² fit 16 bits,
// and no lower lane carries into them), so one multiply does four
// multiply-adds: a brute-force scan of 100,000 vectors of 256 dimensions
// runs in a few milliseconds without SIMD. The levels lose under 2% of a
// cosine, enough to rank by; the log keeps the float vectors.
const (
	laneBias   = 64
	laneLevels = 63
)

// packedWords is how many words a vector of dims dimensions packs into.
func packedWords(dims int) int { return (dims + 3) / 4 }

// pack quantizes the unit vector v into dst, the lowest dimension in the
// lowest lane (the highest for the query, reversed), and returns the
// scale that turns a level back into its float and the sum of the levels.
func pack(dst []uint64, v []float32, reversed bool) (scale float32, sum int32) {
	var peak float32
	for _, x := range v {
		peak = max(peak, x, -x)
	}
	clear(dst)
	inv := float32(0)
	if peak > 0 {
		inv = laneLevels / peak
	}
	for w := range dst {
		for lane := range 4 {
			level := int32(0)
			if d := 4*w + lane; d < len(v) {
				level = int32(math.Round(float64(v[d] * inv)))
			}
			sum += level
			shift := 16 * lane
			if reversed {
				shift = 16 * (3 - lane)
			}
			dst[w] |= uint64(level+laneBias) << shift
		}
	}
	if peak == 0 {
		return 0, sum
	}
	return peak / laneLevels, sum
}

// packedDot is the dot product of the levels of an item's packed vector
// and the query's reversed one, given the sums of their levels.
func packedDot(item, query []uint64, itemSum, querySum int32) int32 {
	n := int32(4 * len(item))
	var s0, s1, s2, s3 uint64
	for len(item) >= 4 && len(query) >= 4 {
		a, b := item[:4:4], query[:4:4]
		s0 += (a[0] * b[0]) >> 48
		s1 += (a[1] * b[1]) >> 48
		s2 += (a[2] * b[2]) >> 48
		s3 += (a[3] * b[3]) >> 48
		item, query = item[4:], query[4:]
	}
	for i := range min(len(item), len(query)) {
		s0 += (item[i] * query[i]) >> 48
	}
	// Σ(a+bias)(b+bias) = Σab + bias·(Σa+Σb) + bias²·n
	return int32(s0+s1+s2+s3) - laneBias*(itemSum+querySum) - laneBias*laneBias*n
}
