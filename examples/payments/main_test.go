package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
)

// want is the whole run: the blocked transfer never reaches the bank (2
// transfers, not 3), observe mode lets it through with its evidence, and
// the large transfer goes out once two of three treasurers approved.
const want = `enforce: wire-funds $500.00 to offshore-llc refused: govern: blocked by policy: beneficiary offshore-llc is not approved (policy payments 2026-03)
observe: wire-funds $500.00 to offshore-llc went out
enforce: wire-funds $25000.00 to acme went out once ann and bob of 3 treasurers (committed) approved
agent.audit:
  enforce payer event of payment: block -> blocked (payments 2026-03): beneficiary offshore-llc is not approved
  observe payer event of payment: block -> effected (payments 2026-03): beneficiary offshore-llc is not approved
  enforce payer event of payment: propose -> approved (payments 2026-03): $25000.00 is above the $10000.00 limit
audit chains intact (3 records)
bank.transfers holds 2 transfers
`

func runOn(t *testing.T, tr runtime.Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, tr, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestPaymentsExampleOnTheEmbeddedLog(t *testing.T) {
	runOn(t, embedlog.New("payments", embedlog.Config{}))
}

func TestPaymentsExampleOverTheTestServer(t *testing.T) {
	runOn(t, featuretest.TestServer(t, "payments")(t))
}
