// Package billingapi holds message types shared by the billing agent and its
// callers, so the end-to-end fixture exercises inputs from another package.
package billingapi

// Refund asks for part of a charge back.
type Refund struct {
	Charge string `json:"charge"`
	Cents  int64  `json:"cents"`
}

// CardExpired is the event a card issuer publishes when a card lapses.
type CardExpired struct {
	Card  string
	Month int
}
