// Package blake3 is the BLAKE3 hash (its default, unkeyed mode with a
// 32-byte output), written from the published specification in plain Go:
// the reference SDK digests its governance evidence with it, and the Go
// implementations on the module proxy carry assembly and a CPU-feature
// dependency the root module does not need for hashing a few hundred bytes.
// It favours clarity over speed (no SIMD, no parallel chunks).
package blake3

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
)

// Size is the byte length of a digest.
const Size = 32

const (
	blockLen = 64
	chunkLen = 1024

	chunkStart = 1 << 0
	chunkEnd   = 1 << 1
	parent     = 1 << 2
	root       = 1 << 3
)

var iv = [8]uint32{0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19}

var permutation = [16]int{2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}

func g(s *[16]uint32, a, b, c, d int, x, y uint32) {
	s[a] += s[b] + x
	s[d] = bits.RotateLeft32(s[d]^s[a], -16)
	s[c] += s[d]
	s[b] = bits.RotateLeft32(s[b]^s[c], -12)
	s[a] += s[b] + y
	s[d] = bits.RotateLeft32(s[d]^s[a], -8)
	s[c] += s[d]
	s[b] = bits.RotateLeft32(s[b]^s[c], -7)
}

// compress is the compression function; it returns the first eight words
// of its output, the chaining value.
func compress(cv [8]uint32, m [16]uint32, counter uint64, n uint32, flags uint32) [8]uint32 {
	s := [16]uint32{cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
		iv[0], iv[1], iv[2], iv[3], uint32(counter), uint32(counter >> 32), n, flags}
	for r := range 7 {
		g(&s, 0, 4, 8, 12, m[0], m[1])
		g(&s, 1, 5, 9, 13, m[2], m[3])
		g(&s, 2, 6, 10, 14, m[4], m[5])
		g(&s, 3, 7, 11, 15, m[6], m[7])
		g(&s, 0, 5, 10, 15, m[8], m[9])
		g(&s, 1, 6, 11, 12, m[10], m[11])
		g(&s, 2, 7, 8, 13, m[12], m[13])
		g(&s, 3, 4, 9, 14, m[14], m[15])
		if r < 6 {
			var p [16]uint32
			for i, j := range permutation {
				p[i] = m[j]
			}
			m = p
		}
	}
	var out [8]uint32
	for i := range out {
		out[i] = s[i] ^ s[i+8]
	}
	return out
}

// node is a compression not yet run: the last one of a chunk or a parent,
// run with the root flag when it is the tree's root.
type node struct {
	cv      [8]uint32
	block   [16]uint32
	counter uint64
	n       uint32
	flags   uint32
}

func (o node) chainingValue() [8]uint32 { return compress(o.cv, o.block, o.counter, o.n, o.flags) }

func words(b []byte) [16]uint32 {
	var padded [blockLen]byte
	copy(padded[:], b)
	var m [16]uint32
	for i := range m {
		m[i] = binary.LittleEndian.Uint32(padded[4*i:])
	}
	return m
}

// chunk compresses all but the last block of chunk number index and
// returns the last block's node.
func chunk(b []byte, index uint64) node {
	cv, flags := iv, uint32(chunkStart)
	for len(b) > blockLen {
		cv = compress(cv, words(b[:blockLen]), index, blockLen, flags)
		b, flags = b[blockLen:], 0
	}
	return node{cv: cv, block: words(b), counter: index, n: uint32(len(b)), flags: flags | chunkEnd}
}

// subtree returns the node of the subtree over b, whose first chunk is
// number first: the left subtree holds the largest power of two of chunks
// that leaves at least one byte to the right.
func subtree(b []byte, first uint64) node {
	if len(b) <= chunkLen {
		return chunk(b, first)
	}
	chunks := uint64(len(b)-1) / chunkLen // whole chunks before the last byte
	left := uint64(1) << (63 - bits.LeadingZeros64(chunks))
	l := subtree(b[:left*chunkLen], first).chainingValue()
	r := subtree(b[left*chunkLen:], first+left).chainingValue()
	var m [16]uint32
	copy(m[:8], l[:])
	copy(m[8:], r[:])
	return node{cv: iv, block: m, n: blockLen, flags: parent}
}

// Sum returns the BLAKE3 digest of b.
func Sum(b []byte) [Size]byte {
	top := subtree(b, 0)
	out := compress(top.cv, top.block, top.counter, top.n, top.flags|root)
	var d [Size]byte
	for i, w := range out {
		binary.LittleEndian.PutUint32(d[4*i:], w)
	}
	return d
}

// SumHex returns the BLAKE3 digest of b as lowercase hex, the form the
// reference's evidence carries.
func SumHex(b []byte) string {
	d := Sum(b)
	return hex.EncodeToString(d[:])
}
