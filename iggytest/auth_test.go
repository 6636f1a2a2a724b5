package iggytest_test

import (
	"testing"

	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggytest"
)

func TestPingNeedsNoLogin(t *testing.T) {
	c := dial(t, iggytest.Start(t, iggytest.Config{}))
	if err := c.Ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestLoginWithDefaultRootCredentials(t *testing.T) {
	c := dial(t, iggytest.Start(t, iggytest.Config{}))
	info, err := c.LoginUser("iggy", "iggy")
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if info.UserId != 0 {
		t.Fatalf("user id = %d, want 0 (root)", info.UserId)
	}
}

func TestLoginWithBadCredentialsFails(t *testing.T) {
	c := dial(t, iggytest.Start(t, iggytest.Config{}))
	_, err := c.LoginUser("iggy", "wrong")
	wantCode(t, err, ierror.InvalidCredentialsCode)
}

func TestLoginWithConfiguredCredentials(t *testing.T) {
	c := dial(t, iggytest.Start(t, iggytest.Config{Username: "admin", Password: "secret"}))
	if _, err := c.LoginUser("iggy", "iggy"); err == nil {
		t.Fatal("default credentials accepted after Config.Username and Password were set")
	}
	if _, err := c.LoginUser("admin", "secret"); err != nil {
		t.Fatalf("login: %v", err)
	}
}

func TestCallsBeforeLoginAreUnauthenticated(t *testing.T) {
	c := dial(t, iggytest.Start(t, iggytest.Config{}))
	_, err := c.GetStreams()
	wantCode(t, err, ierror.UnauthenticatedCode)
	_, err = c.CreateStream("s")
	wantCode(t, err, ierror.UnauthenticatedCode)
}

func TestLogoutEndsTheLogin(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	if err := c.LogoutUser(); err != nil {
		t.Fatalf("logout: %v", err)
	}
	_, err := c.GetStreams()
	wantCode(t, err, ierror.UnauthenticatedCode)
}

func TestLoginWithConfiguredPersonalAccessToken(t *testing.T) {
	c := dial(t, iggytest.Start(t, iggytest.Config{Tokens: []string{"tok-123"}}))
	if _, err := c.LoginWithPersonalAccessToken("tok-123"); err != nil {
		t.Fatalf("token login: %v", err)
	}
	if _, err := c.GetStreams(); err != nil {
		t.Fatalf("call after token login: %v", err)
	}
}

func TestLoginWithUnknownPersonalAccessTokenFails(t *testing.T) {
	c := dial(t, iggytest.Start(t, iggytest.Config{}))
	_, err := c.LoginWithPersonalAccessToken("nope")
	wantCode(t, err, ierror.ResourceNotFoundCode)
}

func TestCreatedPersonalAccessTokenLogsIn(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	admin := login(t, s)
	raw, err := admin.CreatePersonalAccessToken("ci", 0)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	tokens, err := admin.GetPersonalAccessTokens()
	if err != nil || len(tokens) != 1 || tokens[0].Name != "ci" {
		t.Fatalf("tokens = %+v, %v; want one named ci", tokens, err)
	}
	c := dial(t, s)
	if _, err := c.LoginWithPersonalAccessToken(raw.Token); err != nil {
		t.Fatalf("login with created token: %v", err)
	}
	if err := admin.DeletePersonalAccessToken("ci"); err != nil {
		t.Fatalf("delete token: %v", err)
	}
	_, err = dial(t, s).LoginWithPersonalAccessToken(raw.Token)
	wantCode(t, err, ierror.ResourceNotFoundCode)
}

func TestClusterMetadataIsUnavailable(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	_, err := c.GetClusterMetadata()
	wantCode(t, err, ierror.FeatureUnavailableCode)
}
