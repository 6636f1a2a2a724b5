package memory

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// TokenCounter counts the tokens a text costs in a prompt.
type TokenCounter func(text string) int

// EstimateTokens is the default TokenCounter: about four bytes a token,
// rounded up, the reference's estimate without a tokenizer. It is a rough
// proxy, not a model's count; pass the model's tokenizer for exact budgets.
func EstimateTokens(text string) int { return (len(text) + 3) / 4 }

// ContextBlock renders recalled items for a prompt, in the order given,
// separated by blank lines, within budget tokens as count counts them (nil
// count: EstimateTokens). The first item always renders; once the next
// would pass the budget, the rest are dropped and a line "[... N more
// recalled item(s) omitted ...]" says how many. A budget of 0 or less
// renders every item. Bodies are read as UTF-8, invalid bytes replaced.
func ContextBlock(items []Item, budget int, count TokenCounter) string {
	if count == nil {
		count = EstimateTokens
	}
	var b strings.Builder
	spent, rendered := 0, 0
	for _, it := range items {
		text := strings.ToValidUTF8(string(it.Body), string(utf8.RuneError))
		cost := count(text)
		if budget > 0 && rendered > 0 && spent+cost > budget {
			break
		}
		if rendered > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(text)
		spent += cost
		rendered++
	}
	if omitted := len(items) - rendered; omitted > 0 {
		if rendered > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[... %d more recalled item(s) omitted ...]", omitted)
	}
	return b.String()
}
