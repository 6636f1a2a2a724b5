package memory

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// BM25 parameters: the usual term-frequency saturation and length
// normalization.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Tokens splits text into the terms keyword recall matches on: lowercased
// runs of letters and digits, where a run joined by single '-', '_', '.',
// '/' or ':' characters ("INV-77", "v1.2", "db.pool") stays one term and its
// parts are terms too, so "INV-77" matches exactly and "inv" still matches.
// Whole terms come first, each part once after them.
func Tokens(text string) []string {
	var whole, parts []string
	forEachWord(text, func(word string, joined bool) {
		if !joined {
			whole = append(whole, word)
			return
		}
		whole = append(whole, word)
		start := 0
		for i, r := range word {
			if isJoiner(r) {
				if i > start {
					parts = append(parts, word[start:i])
				}
				start = i + 1
			}
		}
		if start < len(word) {
			parts = append(parts, word[start:])
		}
	})
	return append(whole, parts...)
}

// queryTerms splits a query into its whole terms (what an exact match
// counts) and the parts of its joined terms, each deduplicated.
func queryTerms(text string) (whole, parts []string) {
	seen := map[string]bool{}
	forEachWord(text, func(word string, joined bool) {
		if !seen[word] {
			seen[word] = true
			whole = append(whole, word)
		}
	})
	for _, t := range Tokens(text)[len(whole):] {
		if !seen[t] {
			seen[t] = true
			parts = append(parts, t)
		}
	}
	return whole, parts
}

// forEachWord calls fn with each lowercased word of text and whether it is
// a joined one.
func forEachWord(text string, fn func(word string, joined bool)) {
	buf := make([]byte, 0, 32)
	joined := false
	flush := func() {
		if len(buf) > 0 {
			fn(string(buf), joined)
		}
		buf, joined = buf[:0], false
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		case isJoiner(r) && len(buf) > 0 && i+n < len(text) && isWordRune(text[i+n:]):
			buf = append(buf, byte(r))
			joined = true
		default:
			flush()
		}
		i += n
	}
	flush()
}

func isJoiner(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '/' || r == ':' }

func isWordRune(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// posting is one item's occurrences of a term.
type posting struct {
	slot int32
	tf   uint16
}

// keywordIndex is the inverted index keyword recall ranks with: the
// postings of every term, each term's live document frequency, and the
// total length of the live items, for BM25. A forgotten item's postings
// stay until the projection compacts (recall skips them); its counts leave
// at once.
type keywordIndex struct {
	postings map[string][]posting
	df       map[string]int32
	docs     int
	totalLen int64
}

func newKeywordIndex() keywordIndex {
	return keywordIndex{postings: make(map[string][]posting), df: make(map[string]int32)}
}

// add indexes the terms of the item in slot and returns its length.
func (x *keywordIndex) add(slot int32, terms []string) uint32 {
	counts := make(map[string]uint16, len(terms))
	for _, t := range terms {
		if counts[t] < math.MaxUint16 {
			counts[t]++
		}
	}
	for t, n := range counts {
		x.postings[t] = append(x.postings[t], posting{slot: slot, tf: n})
		x.df[t]++
	}
	x.docs++
	x.totalLen += int64(len(terms))
	return uint32(len(terms))
}

// remove takes a forgotten item's terms out of the counts.
func (x *keywordIndex) remove(terms []string) {
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			if x.df[t]--; x.df[t] <= 0 {
				delete(x.df, t)
			}
		}
	}
	x.docs--
	x.totalLen -= int64(len(terms))
}

// idf is BM25's inverse document frequency of a term in df of the live items.
func (x *keywordIndex) idf(df int32) float64 {
	n := float64(x.docs)
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}
