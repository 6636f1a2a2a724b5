package wire_test

import (
	"errors"
	"math/rand/v2"
)

// item is one CBOR data item as the differential test's mutator holds it:
// enough structure to write it back in another shape (head widths,
// indefinite lengths, chunking) or to edit it (tags, replacements, added or
// repeated map entries). The mutator's inputs are well-formed seeds; what it
// writes need not be.
type item struct {
	major byte   // CBOR major type, 0..7
	arg   uint64 // integer, tag number, simple value or float bits
	width int    // head argument bytes (1, 2, 4, 8), 0 for the shortest; a float's width
	indef bool   // indefinite length (strings, arrays, maps)
	// chunks are an indefinite string's chunk lengths, summing to
	// len(data); nested makes the first chunk itself indefinite.
	chunks []int
	nested bool
	data   []byte  // string content
	kids   []*item // array items, map keys and values in turn, a tag's content
}

const (
	mUint = iota
	mNeg
	mBytes
	mText
	mArray
	mMap
	mTag
	mSimple
)

var errSeed = errors.New("seed is not CBOR the mutator reads")

// parseItem reads one item from b and returns it with the bytes it took.
func parseItem(b []byte, depth int) (*item, int, error) {
	if len(b) == 0 || depth > 300 {
		return nil, 0, errSeed
	}
	it := &item{major: b[0] >> 5}
	ai := b[0] & 0x1f
	i := 1
	switch {
	case ai < 24:
		it.arg = uint64(ai)
	case ai <= 27:
		n := 1 << (ai - 24)
		if len(b) < 1+n {
			return nil, 0, errSeed
		}
		for _, c := range b[1 : 1+n] {
			it.arg = it.arg<<8 | uint64(c)
		}
		it.width, i = n, 1+n
	case ai == 31 && it.major >= mBytes && it.major <= mMap:
		it.indef = true
	default:
		return nil, 0, errSeed
	}
	switch it.major {
	case mBytes, mText:
		if it.indef {
			for i < len(b) && b[i] != 0xff {
				chunk, n, err := parseItem(b[i:], depth+1)
				if err != nil || chunk.major != it.major || chunk.indef {
					return nil, 0, errSeed
				}
				it.data = append(it.data, chunk.data...)
				it.chunks = append(it.chunks, len(chunk.data))
				i += n
			}
			if i >= len(b) {
				return nil, 0, errSeed
			}
			return it, i + 1, nil
		}
		if uint64(len(b)-i) < it.arg {
			return nil, 0, errSeed
		}
		it.data = append([]byte(nil), b[i:i+int(it.arg)]...)
		return it, i + int(it.arg), nil
	case mArray, mMap, mTag:
		count := it.arg
		if it.major == mMap {
			count *= 2
		}
		if it.major == mTag {
			count = 1
		}
		for k := uint64(0); it.indef || k < count; k++ {
			if it.indef && i < len(b) && b[i] == 0xff {
				return it, i + 1, nil
			}
			kid, n, err := parseItem(b[i:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			it.kids = append(it.kids, kid)
			i += n
		}
		return it, i, nil
	}
	return it, i, nil
}

// appendHeadWidth appends a head with its argument in width bytes (0 or a
// width too narrow for arg: the shortest).
func appendHeadWidth(b []byte, major byte, arg uint64, width int) []byte {
	m := major << 5
	switch {
	case width == 1 && arg <= 0xff:
		return append(b, m|24, byte(arg))
	case width == 2 && arg <= 0xffff:
		return append(b, m|25, byte(arg>>8), byte(arg))
	case width == 4 && arg <= 0xffff_ffff:
		return append(b, m|26, byte(arg>>24), byte(arg>>16), byte(arg>>8), byte(arg))
	case width == 8:
		return append(b, m|27, byte(arg>>56), byte(arg>>48), byte(arg>>40), byte(arg>>32), byte(arg>>24), byte(arg>>16), byte(arg>>8), byte(arg))
	}
	switch {
	case arg < 24:
		return append(b, m|byte(arg))
	case arg <= 0xff:
		return append(b, m|24, byte(arg))
	case arg <= 0xffff:
		return append(b, m|25, byte(arg>>8), byte(arg))
	case arg <= 0xffff_ffff:
		return append(b, m|26, byte(arg>>24), byte(arg>>16), byte(arg>>8), byte(arg))
	}
	return appendHeadWidth(b, major, arg, 8)
}

// encode appends the item as its fields say.
func (it *item) encode(b []byte) []byte {
	switch it.major {
	case mBytes, mText:
		if !it.indef {
			b = appendHeadWidth(b, it.major, uint64(len(it.data)), it.width)
			return append(b, it.data...)
		}
		b = append(b, it.major<<5|31)
		if it.nested {
			// The whole content as one chunk of an indefinite chunk.
			b = append(b, it.major<<5|31)
			b = appendHeadWidth(b, it.major, uint64(len(it.data)), 0)
			b = append(append(b, it.data...), 0xff)
			return append(b, 0xff)
		}
		rest := it.data
		for _, n := range it.chunks {
			n = min(n, len(rest))
			b = appendHeadWidth(b, it.major, uint64(n), 0)
			b = append(b, rest[:n]...)
			rest = rest[n:]
		}
		if len(rest) > 0 {
			b = appendHeadWidth(b, it.major, uint64(len(rest)), 0)
			b = append(b, rest...)
		}
		return append(b, 0xff)
	case mArray, mMap:
		if it.indef {
			b = append(b, it.major<<5|31)
		} else {
			n := uint64(len(it.kids))
			if it.major == mMap {
				n /= 2
			}
			b = appendHeadWidth(b, it.major, n, it.width)
		}
		for _, kid := range it.kids {
			b = kid.encode(b)
		}
		if it.indef {
			b = append(b, 0xff)
		}
		return b
	case mTag:
		b = appendHeadWidth(b, mTag, it.arg, it.width)
		for _, kid := range it.kids {
			b = kid.encode(b)
		}
		return b
	case mSimple:
		switch it.width {
		case 1:
			return append(b, 0xf8, byte(it.arg))
		case 2:
			return append(b, 0xf9, byte(it.arg>>8), byte(it.arg))
		case 4:
			return append(b, 0xfa, byte(it.arg>>24), byte(it.arg>>16), byte(it.arg>>8), byte(it.arg))
		case 8:
			return appendHeadWidth(b, mSimple, it.arg, 8)
		}
		return append(b, 0xe0|byte(it.arg&0x1f))
	}
	return appendHeadWidth(b, it.major, it.arg, it.width)
}

func (it *item) clone() *item {
	c := *it
	c.data = append([]byte(nil), it.data...)
	c.chunks = append([]int(nil), it.chunks...)
	c.kids = make([]*item, len(it.kids))
	for k, kid := range it.kids {
		c.kids[k] = kid.clone()
	}
	return &c
}

// slot is a place in a tree an item sits in, so a mutation can replace it.
type slot struct {
	at     **item
	parent *item // nil at the root
	key    bool  // a map key
}

// slots lists every place in the tree under *root, the root first.
func slots(root **item) []slot {
	out := []slot{{at: root}}
	for k := 0; k < len(out); k++ {
		it := *out[k].at
		for j := range it.kids {
			out = append(out, slot{at: &it.kids[j], parent: it, key: it.major == mMap && j%2 == 0})
		}
	}
	return out
}

// mutator rewrites seeds into the shapes the differential test explores.
type mutator struct{ rng *rand.Rand }

func (m *mutator) pick(n int) int { return m.rng.IntN(n) }

func (m *mutator) chance(p float64) bool { return m.rng.Float64() < p }

// interestingTags are tag numbers with a meaning to a decoder: bignums,
// date, encoded CBOR, the self-describe prefix, and ones with long heads.
var interestingTags = []uint64{0, 1, 2, 3, 4, 5, 21, 24, 32, 55799, 256, 1 << 32}

// interestingFloats are float bits per width: zeros, one, infinities,
// quiet and signaling NaNs with and without payloads, subnormals, extremes.
var interestingFloats = map[int][]uint64{
	2: {0x0000, 0x8000, 0x3c00, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x7d00, 0xfe01, 0x0001, 0x03ff, 0x7bff},
	4: {0x00000000, 0x3f800000, 0x7f800000, 0x7fc00000, 0x7f800001, 0x7fa00000, 0xffc00001, 0x7fc02000, 0x00000001, 0x7f7fffff, 0x3fc00000, 0x47800000},
	8: {0, 0x3ff0000000000000, 0x7ff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001, 0x7ff4000000000000,
		0x7ff8040000000000, 0x7ff8000020000000, 0x7ff8000000000001, 0xfff8000000000000, 1, 0x7fefffffffffffff, 0x3fb999999999999a},
}

// randomItem returns a small item of any type.
func (m *mutator) randomItem(depth int) *item {
	switch k := m.pick(12); {
	case k == 0:
		return &item{major: mUint, arg: m.randomUint(), width: m.randomWidth()}
	case k == 1:
		return &item{major: mNeg, arg: m.randomUint()}
	case k == 2:
		return &item{major: mBytes, data: m.randomBytes()}
	case k == 3:
		return &item{major: mText, data: m.randomText()}
	case k == 4 && depth < 3:
		it := &item{major: mArray}
		for range m.pick(4) {
			it.kids = append(it.kids, m.randomItem(depth+1))
		}
		return it
	case k == 5 && depth < 3:
		it := &item{major: mMap}
		for range m.pick(3) {
			it.kids = append(it.kids, &item{major: mText, data: m.randomText()}, m.randomItem(depth+1))
		}
		return it
	case k == 6 && depth < 3:
		return &item{major: mTag, arg: interestingTags[m.pick(len(interestingTags))], kids: []*item{m.randomItem(depth + 1)}}
	case k == 7:
		return m.randomSimple()
	case k == 8:
		return m.randomFloat()
	case k == 9:
		return m.bignum(m.randomUint(), m.chance(0.3))
	case k == 10:
		return &item{major: mSimple, arg: uint64(20 + m.pick(4))}
	}
	return &item{major: mUint, arg: uint64(m.pick(30))}
}

func (m *mutator) randomWidth() int { return []int{0, 0, 0, 1, 2, 4, 8}[m.pick(7)] }

func (m *mutator) randomUint() uint64 {
	switch m.pick(4) {
	case 0:
		return uint64(m.pick(24))
	case 1:
		return uint64(m.pick(1 << 16))
	case 2:
		return []uint64{255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, 1<<64 - 1}[m.pick(9)]
	}
	return m.rng.Uint64()
}

func (m *mutator) randomBytes() []byte {
	b := make([]byte, []int{0, 1, 3, 16, 20, 8, 64, 25}[m.pick(8)])
	for k := range b {
		b[k] = byte(m.rng.Uint32())
	}
	return b
}

// randomText is mostly valid UTF-8 (ASCII, multi-byte, control characters)
// and sometimes not.
func (m *mutator) randomText() []byte {
	pool := []string{"x", "kind", "event", "k", "é", "日本", "🙂", "\x00", "\x7f", "\u0085", "source", "metadata", "a b"}
	var b []byte
	for range 1 + m.pick(3) {
		b = append(b, pool[m.pick(len(pool))]...)
	}
	if m.chance(0.1) {
		b = append(b, []byte{0xff, 0xc3, 0xed, 0xa0, 0x80}[m.pick(5)])
	}
	return b
}

func (m *mutator) randomSimple() *item {
	switch m.pick(4) {
	case 0:
		return &item{major: mSimple, arg: uint64(20 + m.pick(4))}
	case 1:
		return &item{major: mSimple, arg: uint64(m.pick(20))}
	case 2:
		return &item{major: mSimple, arg: uint64(m.pick(256)), width: 1}
	}
	return &item{major: mSimple, arg: uint64(20 + m.pick(4)), width: 1}
}

func (m *mutator) randomFloat() *item {
	w := []int{2, 4, 8}[m.pick(3)]
	bits := interestingFloats[w][m.pick(len(interestingFloats[w]))]
	if m.chance(0.3) {
		bits = m.rng.Uint64() >> (64 - 8*w)
	}
	return &item{major: mSimple, arg: bits, width: w}
}

// bignum spells v as tag 2 (or 3) and its big-endian bytes, sometimes with
// leading zeros or as an indefinite string.
func (m *mutator) bignum(v uint64, negative bool) *item {
	var be []byte
	for s := 56; s >= 0; s -= 8 {
		if c := byte(v >> s); c != 0 || len(be) > 0 {
			be = append(be, c)
		}
	}
	if m.chance(0.3) {
		be = append(make([]byte, 1+m.pick(9)), be...)
	}
	content := &item{major: mBytes, data: be}
	if m.chance(0.1) {
		content.indef, content.chunks = true, []int{m.pick(len(be) + 1)}
	}
	tag := uint64(2)
	if negative {
		tag = 3
	}
	return &item{major: mTag, arg: tag, kids: []*item{content}}
}

// mutate returns an encoding of a changed copy of seed.
func (m *mutator) mutate(seed *item) []byte {
	root := seed.clone()
	for range 1 + m.pick(3) {
		m.change(&root)
	}
	b := root.encode(nil)
	switch {
	case m.chance(0.08) && len(b) > 0:
		b = b[:m.pick(len(b))]
	case m.chance(0.03) && len(b) > 0:
		b[m.pick(len(b))] ^= byte(1 + m.pick(255))
	case m.chance(0.02):
		b = append(b, byte(m.rng.Uint32()))
	}
	return b
}

// change applies one structure-aware edit somewhere under *root.
func (m *mutator) change(root **item) {
	all := slots(root)
	s := all[m.pick(len(all))]
	it := *s.at
	switch m.pick(17) {
	case 0: // a longer head than needed
		if it.major != mSimple {
			it.width = []int{1, 2, 4, 8}[m.pick(4)]
		}
	case 1: // indefinite length, strings in random chunks
		if it.major >= mBytes && it.major <= mMap {
			it.indef = true
			it.chunks = nil
			for rest := len(it.data); rest > 0; {
				n := m.pick(rest + 1)
				it.chunks = append(it.chunks, n)
				rest -= n
			}
			it.nested = m.chance(0.05)
		}
	case 2: // tags in front
		for range 1 + m.pick(2) {
			*s.at = &item{major: mTag, arg: interestingTags[m.pick(len(interestingTags))], kids: []*item{*s.at}}
		}
	case 3:
		*s.at = m.randomSimple()
	case 4:
		*s.at = m.randomFloat()
	case 5: // deep nesting around the item
		depth := 240 + m.pick(25)
		wrap := byte(mArray)
		if m.chance(0.5) {
			wrap = mTag
		}
		for range depth {
			*s.at = &item{major: wrap, arg: 1, kids: []*item{*s.at}}
		}
	case 6: // a map entry twice
		if maps := mapsIn(all); len(maps) > 0 {
			mp := maps[m.pick(len(maps))]
			if len(mp.kids) >= 2 {
				e := 2 * m.pick(len(mp.kids)/2)
				mp.kids = append(mp.kids, mp.kids[e].clone(), m.maybeOther(mp.kids[e+1]))
			}
		}
	case 7: // an unknown key
		if maps := mapsIn(all); len(maps) > 0 {
			mp := maps[m.pick(len(maps))]
			key := &item{major: mText, data: m.randomText()}
			switch m.pick(6) {
			case 0:
				key.major = mBytes
			case 1:
				key.data = make([]byte, 4095+m.pick(3))
				for k := range key.data {
					key.data[k] = 'a'
				}
			}
			at := 2 * m.pick(len(mp.kids)/2+1)
			mp.kids = append(mp.kids[:at], append([]*item{key, m.randomItem(0)}, mp.kids[at:]...)...)
		}
	case 8:
		if !s.key || m.chance(0.2) {
			*s.at = m.randomItem(0)
		}
	case 9: // integers as bignums
		switch it.major {
		case mUint:
			*s.at = m.bignum(it.arg, false)
		case mNeg:
			*s.at = m.bignum(it.arg, true)
		}
	case 10: // text and bytes swapped, bytes as an array of u8
		switch {
		case it.major == mText:
			it.major = mBytes
		case it.major == mBytes && m.chance(0.5):
			it.major = mText
		case it.major == mBytes:
			arr := &item{major: mArray}
			for _, c := range it.data {
				arr.kids = append(arr.kids, &item{major: mUint, arg: uint64(c)})
			}
			*s.at = arr
		}
	case 11: // an entry or element dropped
		if s.parent != nil && s.parent.major == mArray {
			for k, kid := range s.parent.kids {
				if kid == it {
					s.parent.kids = append(s.parent.kids[:k], s.parent.kids[k+1:]...)
					break
				}
			}
		} else if maps := mapsIn(all); len(maps) > 0 {
			mp := maps[m.pick(len(maps))]
			if len(mp.kids) >= 2 {
				e := 2 * m.pick(len(mp.kids)/2)
				mp.kids = append(mp.kids[:e], mp.kids[e+2:]...)
			}
		}
	case 12: // null or undefined, perhaps behind a tag
		n := &item{major: mSimple, arg: uint64(22 + m.pick(2))}
		if m.chance(0.3) {
			n = &item{major: mTag, arg: 1, kids: []*item{n}}
		}
		*s.at = n
	case 13: // other text, valid UTF-8 or not
		if it.major == mText && !s.key {
			it.data = m.randomText()
		}
	case 14: // a float in another width
		if it.major == mSimple && it.width >= 2 {
			*s.at = m.randomFloat()
		}
	case 16: // a string grown to a length next to a cap or the reference's 4 KiB scratch
		if (it.major == mText || it.major == mBytes) && !s.key {
			n := []int{63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 8193}[m.pick(13)]
			fill := byte('a')
			if len(it.data) > 0 {
				fill = it.data[0]
			}
			it.data = append(it.data[:0:0], it.data...)
			for len(it.data) < n {
				it.data = append(it.data, fill)
			}
			it.data = it.data[:n]
		}
	case 15: // the kind as a map, or a value's list nested deep
		if s.parent != nil && s.parent.major == mMap && s.key && string(it.data) == "kind" {
			for k := range s.parent.kids {
				if s.parent.kids[k] == it && k+1 < len(s.parent.kids) {
					s.parent.kids[k+1] = &item{major: mMap, kids: []*item{s.parent.kids[k+1], m.randomItem(1)}}
				}
			}
		} else if it.major == mArray {
			for range 250 + m.pick(10) {
				*s.at = &item{major: mArray, kids: []*item{*s.at}}
			}
		}
	}
}

// maybeOther returns a copy of v, or sometimes another value.
func (m *mutator) maybeOther(v *item) *item {
	if m.chance(0.5) {
		return m.randomItem(1)
	}
	return v.clone()
}

func mapsIn(all []slot) []*item {
	var out []*item
	for _, s := range all {
		if it := *s.at; it.major == mMap {
			out = append(out, it)
		}
	}
	return out
}
