package statestore

import (
	"context"
	"slices"
	"sync"
)

// Memory is an in-process Store: fast, lost with the process.
type Memory struct {
	limits Limits
	mu     sync.Mutex
	values map[string][]byte
	size   int64
}

// NewMemory returns an empty in-memory store within limits.
func NewMemory(limits Limits) (*Memory, error) {
	if err := limits.validate(); err != nil {
		return nil, err
	}
	return &Memory{limits: limits, values: make(map[string][]byte)}, nil
}

// Get returns a copy of key's value.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	if err := checkKey(key); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[key]
	return slices.Clone(v), ok, nil
}

// Set stores a copy of value under key.
func (m *Memory) Set(_ context.Context, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, had := m.values[key]
	keys := len(m.values)
	if !had {
		keys++
	}
	size := m.size - int64(len(old)) + int64(len(value))
	if err := m.limits.admit(key, keys, size); err != nil {
		return err
	}
	m.values[key] = append([]byte{}, value...)
	m.size = size
	return nil
}

// Delete removes key.
func (m *Memory) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.size -= int64(len(m.values[key]))
	delete(m.values, key)
	return nil
}
