// Package xxh32 implements the 32-bit xxHash, the hash Apache Iggy uses (with
// seed 0) to place a keyed message on a partition.
package xxh32

import (
	"encoding/binary"
	"math/bits"
)

const (
	prime1 uint32 = 2654435761
	prime2 uint32 = 2246822519
	prime3 uint32 = 3266489917
	prime4 uint32 = 668265263
	prime5 uint32 = 374761393
)

// Sum32 returns the xxHash32 of b with the given seed; it does not allocate.
func Sum32(b []byte, seed uint32) uint32 {
	n := len(b)
	var h uint32
	if n >= 16 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(b) >= 16 {
			v1 = round(v1, binary.LittleEndian.Uint32(b[0:4]))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:8]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:12]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:16]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) +
			bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + prime5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * prime3
		h = bits.RotateLeft32(h, 17) * prime4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * prime5
		h = bits.RotateLeft32(h, 11) * prime1
	}
	h ^= h >> 15
	h *= prime2
	h ^= h >> 13
	h *= prime3
	h ^= h >> 16
	return h
}

func round(acc, lane uint32) uint32 {
	acc += lane * prime2
	return bits.RotateLeft32(acc, 13) * prime1
}
