package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/wire"
)

// transcriptTemplate is the URI template of a conversation's transcript.
const transcriptTemplate = "laser://conversations/{id}"

const transcriptPrefix = "laser://conversations/"

// TranscriptURI is the resource URI of conversation conv's transcript.
func TranscriptURI(conv wire.ID) string { return transcriptPrefix + conv.String() }

// Record is one record of a transcript.
type Record struct {
	Topic       string          `json:"topic"`
	Position    string          `json:"position"`
	Kind        string          `json:"kind"`
	Source      string          `json:"source,omitempty"`
	Operation   string          `json:"operation,omitempty"`
	Correlation string          `json:"correlation,omitempty"`
	Body        json.RawMessage `json:"body,omitempty"`
}

func (b *Bridge) readTranscript(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	conv, err := wire.ParseID(strings.TrimPrefix(uri, transcriptPrefix))
	if !strings.HasPrefix(uri, transcriptPrefix) || err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	// Under the client's verifier only verified records reach the model: a
	// forged "SYSTEM:" record someone appended to the conversation is left
	// out.
	h, err := bridge.ReadTrusted(ctx, b.client, conv, b.cfg.TranscriptTopics...)
	if err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	records := make([]Record, 0, len(h))
	for _, m := range h {
		r := Record{Topic: m.Topic, Position: m.Position.String(), Kind: "plain", Source: m.Provenance.Agent, Correlation: m.Provenance.Correlation}
		if e := m.Envelope; e != nil {
			r.Kind, r.Source = string(e.Kind), string(e.Source)
			if e.Operation != nil {
				r.Operation = *e.Operation
			}
			if e.Correlation != nil {
				r.Correlation = e.Correlation.String()
			}
		}
		if len(m.Body()) > 0 {
			if body, err := bridge.BodyJSON(m); err == nil {
				r.Body = body
			}
		}
		records = append(records, r)
	}
	return jsonResource(uri, records)
}
