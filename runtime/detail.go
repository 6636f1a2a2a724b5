package runtime

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// rejectedPrefix starts the detail of a rejection, as the reference writes it.
const rejectedPrefix = "rejected: "

// failure is what the consumer needs to know about a handler or middleware
// error: whether to retry it and the capsule detail if it parks the message.
type failure struct {
	retryable bool
	detail    string
}

// classify reads err's class and text. Neither may stop the consumer: an
// error whose methods panic (a typed nil pointer, say) is permanent and its
// detail says so.
func classify(err error) (f failure) {
	defer func() {
		if r := recover(); r != nil {
			f = failure{detail: fmt.Sprintf("handler error could not be read: %v", r)}
		}
	}()
	f.retryable = IsRetryable(err)
	f.detail = err.Error()
	if errors.Is(err, &Error{Code: CodeRejected}) && !strings.HasPrefix(f.detail, rejectedPrefix) {
		f.detail = rejectedPrefix + f.detail
	}
	return f
}

// capsuleDetail makes any text encodable as a capsule detail: invalid UTF-8
// becomes U+FFFD and the text is cut to MaxDeadLetterDetail bytes (on a
// character boundary, ending in "…"), so no error text can make a capsule
// unpublishable.
func capsuleDetail(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= MaxDeadLetterDetail {
		return s
	}
	const ellipsis = "…"
	cut := MaxDeadLetterDetail - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
