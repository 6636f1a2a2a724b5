package iggy

import (
	"context"
	"fmt"
	"os"
)

// Environment variables DialEnv reads, the reference SDK's names.
const (
	// EnvConnectionString holds the connection string, iggy://user:password@host:port
	// or iggy+pat://token@host:port, with or without a /stream path.
	EnvConnectionString = "LASER_CONNECTION_STRING"
	// EnvStream names the stream; it overrides a stream in the connection string.
	EnvStream = "LASER_STREAM"
)

// DialEnv connects like Dial to the server named by LASER_CONNECTION_STRING,
// on the stream named by LASER_STREAM (or, when that is unset, by the
// connection string's path), as the reference's connect_env does. A missing
// connection string or stream is an ErrConnString error naming the variable.
func DialEnv(ctx context.Context, cfg Config) (*Transport, error) {
	conn, err := envConnString(os.Getenv)
	if err != nil {
		return nil, err
	}
	return Dial(ctx, conn, cfg)
}

// envConnString builds Dial's connection string from the environment.
func envConnString(getenv func(string) string) (string, error) {
	s := getenv(EnvConnectionString)
	if s == "" {
		return "", fmt.Errorf("%w: %s is not set; want iggy://user:password@host:port", ErrConnString, EnvConnectionString)
	}
	u, err := parseURL(s)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrConnString, EnvConnectionString, err)
	}
	if stream := getenv(EnvStream); stream != "" {
		u.Path, u.RawPath = "/"+stream, ""
	} else if u.Path == "" || u.Path == "/" {
		return "", fmt.Errorf("%w: no stream: set %s, or name it as the path of %s", ErrConnString, EnvStream, EnvConnectionString)
	}
	return u.String(), nil
}
