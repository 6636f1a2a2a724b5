package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrPatch is the error of a merge patch that does not apply: the patch or
// the stored value is not JSON.
var ErrPatch = errors.New("memory: merge patch does not apply")

// UpdateNamed applies patch, a JSON merge patch (RFC 7396), to the named
// value at key and stores the result, which it returns; a missing key is
// patched as if it held null. A patch or a stored value that is not JSON
// fails with ErrPatch and stores nothing. The read and the write are two
// steps: two writers updating one key at once can lose one update, so give
// a key one writer (as the reference does).
func (l *Store) UpdateNamed(ctx context.Context, key string, patch []byte) ([]byte, error) {
	var p any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("%w: the patch for %q is not JSON: %v", ErrPatch, key, err)
	}
	cur, ok, err := l.Named(ctx, key)
	if err != nil {
		return nil, err
	}
	var target any
	if ok {
		if err := json.Unmarshal(cur, &target); err != nil {
			return nil, fmt.Errorf("%w: the value of %q is not JSON: %v", ErrPatch, key, err)
		}
	}
	merged, err := json.Marshal(mergePatch(target, p))
	if err != nil {
		return nil, fmt.Errorf("memory: encode the patched %q: %w", key, err)
	}
	if err := l.SetNamed(ctx, key, merged); err != nil {
		return nil, err
	}
	return merged, nil
}

// mergePatch is RFC 7396's MergePatch(target, patch).
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}
