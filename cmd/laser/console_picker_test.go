package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDevConsoleShowsEveryStreamOfTheServer parks the tour's dead letter in
// stream shop and follows the dev console's stream picker to it.
func TestDevConsoleShowsEveryStreamOfTheServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	addr, console := startDev(t, ctx)
	parkTheToursDeadLetter(t, ctx, "iggy://iggy:iggy@"+addr+"/shop")
	browser := &http.Client{Jar: newJar(t)}
	page := func(path string) string {
		t.Helper()
		resp, err := browser.Get(strings.TrimSuffix(console, "/") + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if p := page("/"); !strings.Contains(p, `<select name="stream" id="stream"><option selected>laser</option><option>shop</option></select>`) {
		t.Fatalf("the overview offers no picker of both streams:\n%s", p)
	}
	if p := page("/dlq?stream=shop"); !strings.Contains(p, `data-capsule="1:0"`) || !strings.Contains(p, `no charge &#34;ch-7&#34;`) || !strings.Contains(p, "127.0.0.1") || !strings.Contains(p, "/shop") {
		t.Fatalf("the dead letters of stream shop:\n%s", p)
	}
	// The pick holds for the pages after it.
	if p := page("/"); !strings.Contains(p, "<option selected>shop</option>") || !strings.Contains(p, "<b>1</b> dead letter(s)") {
		t.Fatalf("after picking shop the overview shows:\n%s", p)
	}
	// A stream the server does not list shows the default one.
	if p := page("/dlq?stream=nope"); !strings.Contains(p, "<option selected>laser</option>") || strings.Contains(p, `data-capsule="1:0"`) {
		t.Fatalf("an unknown stream shows:\n%s", p)
	}
}

// A request for another name (a page on a rebound domain) picking a stream
// is refused, as every page of the console is, and shows nothing of it.
func TestDevConsolePickerRefusesAForeignHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	addr, console := startDev(t, ctx)
	parkTheToursDeadLetter(t, ctx, "iggy://iggy:iggy@"+addr+"/shop")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(console, "/")+"/dlq?stream=shop", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "evil.example:8088"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(b), "ch-7") {
		t.Fatalf("a foreign host got %d:\n%s", resp.StatusCode, b)
	}
}
