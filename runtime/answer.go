package runtime

// RemoteError returns the remote *Error an AGDX error message carries, as
// Request returns it for an error reply, or nil when m is no AGDX error.
func (m *Message) RemoteError() error { return remoteError(m) }
